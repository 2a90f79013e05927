"""``agentmem chat``: the interactive chat with memory."""
