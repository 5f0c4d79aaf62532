"""The ids an encode core returns, shared by the encode cores: a Python list, or an
array('i') (one copy of the C ids, no Python int per id: what a writer of shards wants); and
int64 offsets or counts as an array('q') the same way."""
from cpython cimport array
from cpython.list cimport PyList_New
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item
    void incref "Py_INCREF"(PyObject* o) noexcept nogil
    PyObject* new_int "PyLong_FromLong"(long value) noexcept

cdef enum:
    # Vocabularies are dense and far smaller; a stray huge id must not allocate a huge table.
    ID_OBJECTS = 1 << 21


cdef inline list id_objects(Py_ssize_t max_id):
    """Python ints for the ids up to max_id (below ID_OBJECTS), so that building a result list
    mostly only increfs."""
    return list(range(min(max_id + 1, <Py_ssize_t>ID_OBJECTS)))


cdef inline list ids_as_list(const vector[int32_t]& ids, list objects):
    """The ids as a list of ints, the known ones from `objects`: read and written through the
    lists' item arrays, one incref each (Chinese text with byte fallback returns about one id
    per byte)."""
    cdef Py_ssize_t i, n = ids.size()
    cdef size_t known = len(objects)
    cdef list result = PyList_New(n)
    cdef PyObject** table = (<PyListObject*>objects).ob_item
    cdef PyObject** items = (<PyListObject*>result).ob_item
    cdef const int32_t* data = ids.data()
    cdef PyObject* token
    for i in range(n):
        if <size_t><uint32_t>data[i] < known:
            token = table[data[i]]
            incref(token)
        else:
            token = new_int(data[i])  # a new reference, which the list takes
            if token == NULL:
                raise MemoryError()
        items[i] = token
    return result


cdef inline array.array ids_as_array(const vector[int32_t]& ids):
    """The ids as an array('i') (a C int is 32 bits on every platform CPython builds for)."""
    cdef Py_ssize_t n = ids.size()
    cdef array.array result = array.clone(array.array("i"), n, False)
    if n:
        memcpy(result.data.as_ints, ids.data(), n * sizeof(int32_t))
    return result


cdef inline array.array int64s_as_array(const vector[int64_t]& values):
    """The values as an array('q'), one copy."""
    cdef Py_ssize_t n = values.size()
    cdef array.array result = array.clone(array.array("q"), n, False)
    if n:
        memcpy(result.data.as_voidptr, values.data(), n * sizeof(int64_t))
    return result


cdef inline void join_runs(vector[int32_t]* ids, int32_t token) noexcept nogil:
    """Each run of `token` in ids written as one, in place (sentencepiece's runs of unknown
    pieces: tokfx.segmenters.unknown_runs, whose UnknownRuns is the twin)."""
    cdef Py_ssize_t i, write = 0, n = ids.size()
    cdef int32_t* data = ids.data()
    cdef int32_t x
    cdef bint after = False  # the id before was `token` (so the last one kept is too)
    for i in range(n):  # every id stored, the end moved only past a kept one: no branch
        x = data[i]
        data[write] = x
        write += not (x == token and after)
        after = x == token
    ids.resize(write)
