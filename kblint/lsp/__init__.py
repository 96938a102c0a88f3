"""`kblint server`: a language server over standard input and output.

index      the link graph kept up to date one entry at a time
workspace  the workspace held in memory, and each entry's issues from its unsaved text
ranges     where an issue is in its file (the key, the link, or the line)
editing    hover and completion
actions    quick fixes (code actions)
server     the protocol handlers (pygls), which only this package's server imports
"""
