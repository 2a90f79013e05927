"""One namespace's tier: the bounded cache of views, a namespace's view and its writer.

Above the store, the indexes and ranking; below :mod:`langchain_agentmem.memory`.
"""
