"""The ids an encode core returns, shared by the encode cores: a Python list, or an
array('i') (one copy of the C ids, no Python int per id: what a writer of shards wants); and
int64 offsets or counts as an array('q') the same way."""
from cpython cimport array
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_FromLong
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

cdef enum:
    # Vocabularies are dense and far smaller; a stray huge id must not allocate a huge table.
    ID_OBJECTS = 1 << 21


cdef inline list id_objects(Py_ssize_t max_id):
    """Python ints for the ids up to max_id (below ID_OBJECTS), so that building a result list
    mostly only increfs."""
    return list(range(min(max_id + 1, <Py_ssize_t>ID_OBJECTS)))


cdef inline list ids_as_list(const vector[int32_t]& ids, list objects):
    cdef Py_ssize_t i, n = ids.size()
    cdef Py_ssize_t known = len(objects)
    cdef list result = PyList_New(n)
    cdef object token
    for i in range(n):
        if ids[i] < known:
            token = <object>PyList_GET_ITEM(objects, ids[i])
        else:
            token = PyLong_FromLong(ids[i])
        Py_INCREF(token)
        PyList_SET_ITEM(result, i, token)
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
    for i in range(n):
        if data[i] == token and write and data[write - 1] == token:
            continue
        data[write] = data[i]
        write += 1
    ids.resize(write)
