"""What a model adds to a record (subject, attribute, value, links) and how it is asked.

Above :mod:`langchain_agentmem.text`; ranking reads the annotations, the memory writes them.
"""
