"""Returning the C heap's free pages to the system, shared inline by the Unigram trainer's cores.

glibc keeps what a core's vectors freed in its heap, and Python's objects (in arenas of their
own) never reuse it: the seed's tables and an E-step's trie stayed resident while the trainer's
next Python objects were made, and the two added up in the process's peak (bench/README.md,
issue 26). malloc_trim gives those pages back; elsewhere it does nothing.
"""

cdef extern from *:
    """
    #ifdef __GLIBC__
    #include <malloc.h>
    static void return_free_memory(void) { malloc_trim(0); }
    #else
    static void return_free_memory(void) {}
    #endif
    """
    void return_free_memory() noexcept nogil
