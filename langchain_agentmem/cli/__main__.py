"""``python -m langchain_agentmem.cli``: the ``agentmem`` command."""

import sys

from langchain_agentmem.cli import main

sys.exit(main())
