"""Byte-level BPE: the trainer (`trainer`) over the Cython merge loop (`merge_loop`)."""
