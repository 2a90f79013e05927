"""Plain text helpers with no state: sentences, words, reply copies, control characters.

The lowest room: it imports nothing of the package.
"""
