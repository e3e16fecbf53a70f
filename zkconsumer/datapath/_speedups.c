/*
 * zkconsumer.datapath._speedups: the record iterator of the stream and the fetcher's sort, in C.
 *
 * Why: the application's loop over a KafkaStream is the consumer's hot path. The pure-Python
 * version (zkconsumer/chunks.py, `_py_records`) already runs no bytecode per message, but its
 * map/zip pipeline still costs about 170 ns per record on the reference machine, most of the
 * connector's overhead over a bare client. This iterator builds the same records in one pass
 * for about 80 ns. It is optional: without a C compiler the package installs without it and
 * chunks.py falls back to the pure-Python pipeline, with identical behaviour.
 *
 * records(cls, topic, partition, msgs, start, offset_of, key_of, value_of) returns an iterator
 * over msgs[start:] (a list of confluent_kafka.Message) that yields
 * cls((topic, partition, offset_of(m), key_of(m), value_of(m), m)) for each message m, where cls
 * is a tuple subclass (MessageAndMetadata) whose sixth slot holds the source message. Like a
 * list iterator it supports __length_hint__ (messages not returned yet) and __setstate__(index)
 * (jump; the stream uses it to drop the rest of a chunk), which is how the stream derives the
 * consumed offset from the iterator's position.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

/*
 * A no-argument accessor of the client's Message (Message.offset, .key, ...), called directly.
 *
 * Going through PyObject_Vectorcall, the method descriptor's vectorcall and the result check
 * costs about 80 instructions per call, more than the accessor itself; the records and the
 * fetcher's scan make five such calls per message. When the accessor is a METH_NOARGS method
 * descriptor and the message is exactly of its type, its C function is called as the
 * descriptor would call it; anything else takes the generic call.
 */
typedef struct {
    PyObject *func;          /* borrowed from the owner, which holds a reference */
    PyTypeObject *type;      /* NULL: always the generic call */
    PyCFunction meth;
} Getter;

static void
getter_init(Getter *g, PyObject *func)
{
    g->func = func;
    g->type = NULL;
    g->meth = NULL;
    if (func != NULL && Py_IS_TYPE(func, &PyMethodDescr_Type)) {
        PyMethodDescrObject *descr = (PyMethodDescrObject *)func;
        if ((descr->d_method->ml_flags & ~METH_COEXIST) == METH_NOARGS) {
            g->type = PyDescr_TYPE(descr);
            g->meth = descr->d_method->ml_meth;
        }
    }
}

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    PyObject *topic;
    PyObject *partition;
    PyObject *msgs;          /* a list, never mutated while iterated */
    PyObject *offset_of;     /* unbound accessors of the client's Message */
    PyObject *key_of;
    PyObject *value_of;
    Py_ssize_t index;        /* next message to return */
    Getter offset, key, value;
    PyObject *recent[2];     /* the last two records returned, for reuse (records_next) */
    int slot;                /* recent[slot] is the older one */
} RecordsObject;

static PyTypeObject RecordsType;

static int
records_traverse(RecordsObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->cls);
    Py_VISIT(self->topic);
    Py_VISIT(self->partition);
    Py_VISIT(self->msgs);
    Py_VISIT(self->offset_of);
    Py_VISIT(self->key_of);
    Py_VISIT(self->value_of);
    Py_VISIT(self->recent[0]);
    Py_VISIT(self->recent[1]);
    return 0;
}

static int
records_clear(RecordsObject *self)
{
    Py_CLEAR(self->cls);
    Py_CLEAR(self->topic);
    Py_CLEAR(self->partition);
    Py_CLEAR(self->msgs);
    Py_CLEAR(self->offset_of);
    Py_CLEAR(self->key_of);
    Py_CLEAR(self->value_of);
    Py_CLEAR(self->recent[0]);
    Py_CLEAR(self->recent[1]);
    return 0;
}

static void
records_dealloc(RecordsObject *self)
{
    PyObject_GC_UnTrack(self);
    records_clear(self);
    PyObject_GC_Del(self);
}

/* One positional call through vectorcall: no argument tuple is built. */
static inline PyObject *
call_one(PyObject *func, PyObject *arg)
{
    PyObject *args[2] = {NULL, arg};
    return PyObject_Vectorcall(func, args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static inline PyObject *
getter_call(const Getter *g, PyObject *m)
{
    if (g->meth != NULL && Py_IS_TYPE(m, g->type)) {
        return g->meth(m, NULL);
    }
    return call_one(g->func, m);
}

/*
 * The next record. Allocating a tuple subclass instance and freeing it again costs about 450
 * instructions, as much as everything else per message; so, like zip() and enumerate() with
 * their result tuples, the iterator reuses a record nobody else refers to any more. It keeps the
 * last two it returned: in `for m in stream`, `m` still holds the previous record while the
 * next one is built, but no longer the one before. A record the application kept is never
 * touched (its reference count is above one), and a fresh one is built instead.
 */
static PyObject *
records_next(RecordsObject *self)
{
    if (self->msgs == NULL || self->index >= PyList_GET_SIZE(self->msgs)) {
        return NULL;  /* exhausted: StopIteration without an exception object */
    }
    PyObject *m = PyList_GET_ITEM(self->msgs, self->index);
    Py_INCREF(m);
    PyObject *offset = NULL, *key = NULL, *value = NULL, *record;
    if ((offset = getter_call(&self->offset, m)) == NULL
            || (key = getter_call(&self->key, m)) == NULL
            || (value = getter_call(&self->value, m)) == NULL) {
        Py_DECREF(m);
        Py_XDECREF(offset);
        Py_XDECREF(key);
        Py_XDECREF(value);
        return NULL;
    }
    PyObject *items[6] = {Py_NewRef(self->topic), Py_NewRef(self->partition), offset, key,
                          value, m};
    record = self->recent[self->slot];
    if (record != NULL && Py_REFCNT(record) == 1 && Py_IS_TYPE(record, self->cls)) {
        PyObject *old[6];
        for (int i = 0; i < 6; i++) {
            old[i] = PyTuple_GET_ITEM(record, i);
            PyTuple_SET_ITEM(record, i, items[i]);
        }
        /* The collector may have untracked it (a tuple of untracked objects); its new
           contents decide again. */
        if (!PyObject_GC_IsTracked(record)) {
            PyObject_GC_Track(record);
        }
        Py_INCREF(record);
        /* Released once the record is whole: freeing them may run arbitrary code. */
        for (int i = 0; i < 6; i++) {
            Py_DECREF(old[i]);
        }
    } else {
        if ((record = self->cls->tp_alloc(self->cls, 6)) == NULL) {
            for (int i = 0; i < 6; i++) {
                Py_DECREF(items[i]);
            }
            return NULL;
        }
        for (int i = 0; i < 6; i++) {
            PyTuple_SET_ITEM(record, i, items[i]);
        }
        Py_XSETREF(self->recent[self->slot], Py_NewRef(record));
    }
    self->slot ^= 1;
    /* Advanced only once the record exists: a failed call leaves the message to be retried,
       and the position never counts a record the caller did not receive. */
    self->index++;
    return record;
}

static PyObject *
records_length_hint(RecordsObject *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t left = self->msgs == NULL ? 0 : PyList_GET_SIZE(self->msgs) - self->index;
    return PyLong_FromSsize_t(left < 0 ? 0 : left);
}

static PyObject *
records_setstate(RecordsObject *self, PyObject *state)
{
    Py_ssize_t index = PyLong_AsSsize_t(state);
    if (index == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t size = self->msgs == NULL ? 0 : PyList_GET_SIZE(self->msgs);
    self->index = index < 0 ? 0 : (index > size ? size : index);
    Py_RETURN_NONE;
}

static PyMethodDef records_methods[] = {
    {"__length_hint__", (PyCFunction)records_length_hint, METH_NOARGS,
     "Messages not returned yet."},
    {"__setstate__", (PyCFunction)records_setstate, METH_O,
     "Continue at this index of the message list (clamped to the list)."},
    {NULL, NULL, 0, NULL}
};

static PyTypeObject RecordsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zkconsumer.datapath._speedups.Records",
    .tp_doc = "Records of one chunk, built as they are taken.",
    .tp_basicsize = sizeof(RecordsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)records_dealloc,
    .tp_traverse = (traverseproc)records_traverse,
    .tp_clear = (inquiry)records_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)records_next,
    .tp_methods = records_methods,
};

static PyObject *
make_records(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "records() takes 8 arguments (cls, topic, partition, msgs, "
                     "start, offset_of, key_of, value_of), %zd given", nargs);
        return NULL;
    }
    PyObject *cls = args[0], *msgs = args[3];
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "records(): cls must be a tuple subclass");
        return NULL;
    }
    if (!PyList_Check(msgs)) {
        PyErr_SetString(PyExc_TypeError, "records(): msgs must be a list");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[4]);
    if (start == -1 && PyErr_Occurred()) {
        return NULL;
    }
    RecordsObject *self = PyObject_GC_New(RecordsObject, &RecordsType);
    if (self == NULL) {
        return NULL;
    }
    self->cls = (PyTypeObject *)Py_NewRef(cls);
    self->topic = Py_NewRef(args[1]);
    self->partition = Py_NewRef(args[2]);
    self->msgs = Py_NewRef(msgs);
    self->offset_of = Py_NewRef(args[5]);
    self->key_of = Py_NewRef(args[6]);
    self->value_of = Py_NewRef(args[7]);
    getter_init(&self->offset, self->offset_of);
    getter_init(&self->key, self->key_of);
    getter_init(&self->value, self->value_of);
    self->recent[0] = self->recent[1] = NULL;
    self->slot = 0;
    Py_ssize_t size = PyList_GET_SIZE(msgs);
    self->index = start < 0 ? 0 : (start > size ? size : start);
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/*
 * runs(msgs, error_of, partition_of) -> list of (partition, start, end, nbytes), or None.
 *
 * The fetcher thread's sort of one batch (zkconsumer/fetcher_thread.py, `_convert`) in one pass:
 * librdkafka hands messages over in per-partition runs; this returns each maximal run of one
 * partition with the size of its values (len() of a client Message is its value's size). None
 * as soon as a message carries an error: the caller then takes its general path, which sorts
 * errors out first. Each message scanned is untracked by the garbage collector (see below).
 */
static PyObject *
scan_runs(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "runs() takes 3 arguments (msgs, error_of, "
                     "partition_of), %zd given", nargs);
        return NULL;
    }
    PyObject *msgs = args[0];
    if (!PyList_Check(msgs)) {
        PyErr_SetString(PyExc_TypeError, "runs(): msgs must be a list");
        return NULL;
    }
    Getter error_of, partition_of;
    getter_init(&error_of, args[1]);
    getter_init(&partition_of, args[2]);
    PyObject *result = PyList_New(0);
    if (result == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(msgs), start = 0, nbytes = 0;
    PyObject *current = NULL;  /* the partition of the run in progress */
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *partition = NULL;
        Py_ssize_t size = 0;
        if (i < n) {
            PyObject *m = PyList_GET_ITEM(msgs, i);
            PyObject *error = getter_call(&error_of, m);
            if (error == NULL) {
                goto fail;
            }
            int has_error = error != Py_None;
            Py_DECREF(error);
            if (has_error) {
                Py_XDECREF(current);
                Py_DECREF(result);
                Py_RETURN_NONE;
            }
            if ((partition = getter_call(&partition_of, m)) == NULL) {
                goto fail;
            }
            /* Out of the garbage collector's sight: a client Message refers only to strings,
               bytes, an error and its headers, none of which can refer back to it, so it
               cannot be part of a cycle. Tracked, each waits in the chunk queues through
               many collections that traverse it for nothing (a bare loop drops it at once). */
            if (Py_IS_TYPE(m, partition_of.type)) {
                PyObject_GC_UnTrack(m);
            }
            if ((size = PyObject_Length(m)) < 0) {
                Py_DECREF(partition);
                goto fail;
            }
        }
        int same = 0;
        if (current != NULL && partition != NULL) {
            same = current == partition ? 1 : PyObject_RichCompareBool(current, partition, Py_EQ);
            if (same < 0) {
                Py_DECREF(partition);
                goto fail;
            }
        }
        if (current != NULL && !same) {
            PyObject *run = Py_BuildValue("(Onnn)", current, start, i, nbytes);
            if (run == NULL || PyList_Append(result, run) < 0) {
                Py_XDECREF(run);
                Py_XDECREF(partition);
                goto fail;
            }
            Py_DECREF(run);
            Py_CLEAR(current);
        }
        if (partition == NULL) {
            break;  /* i == n: the last run is out */
        }
        if (current == NULL) {
            current = partition;
            start = i;
            nbytes = 0;
        } else {
            Py_DECREF(partition);
        }
        nbytes += size;
    }
    return result;
fail:
    Py_XDECREF(current);
    Py_DECREF(result);
    return NULL;
}

/*
 * fields(cls, names): make cls.<names[i]> read item i of the tuple through a read-only member
 * descriptor, in place of the namedtuple's item getters.
 *
 * Why: `record.message` through a namedtuple's getter is a generic attribute lookup (about 120
 * instructions per access); a member descriptor is what the interpreter specialises attribute
 * reads for, and a tuple's items sit at fixed offsets in every instance of a tuple subclass, so
 * the read becomes one load. Reading is all it allows (assignment raises AttributeError as the
 * getters did). The definitions live as long as the process: the descriptors point at them.
 */
static PyObject *
tuple_fields(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "fields() takes 2 arguments (cls, names), %zd given",
                     nargs);
        return NULL;
    }
    PyObject *cls = args[0], *names = args[1];
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "fields(): cls must be a tuple subclass");
        return NULL;
    }
    if (((PyTypeObject *)cls)->tp_itemsize != sizeof(PyObject *)) {
        PyErr_SetString(PyExc_TypeError, "fields(): cls must store its items as a tuple does");
        return NULL;
    }
    if (!PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "fields(): names must be a tuple of strings");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        const char *utf8 = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (utf8 == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "fields(): names must be a tuple of strings");
            }
            return NULL;
        }
        PyMemberDef *def = PyMem_Calloc(1, sizeof(PyMemberDef));
        char *copy = PyMem_Malloc(strlen(utf8) + 1);
        if (def == NULL || copy == NULL) {
            PyMem_Free(def);
            PyMem_Free(copy);
            return PyErr_NoMemory();
        }
        strcpy(copy, utf8);
        def->name = copy;
        def->type = T_OBJECT_EX;
        def->offset = offsetof(PyTupleObject, ob_item) + i * sizeof(PyObject *);
        def->flags = READONLY;
        def->doc = NULL;
        PyObject *descr = PyDescr_NewMember((PyTypeObject *)cls, def);
        if (descr == NULL || PyObject_SetAttr(cls, name, descr) < 0) {
            Py_XDECREF(descr);
            return NULL;
        }
        Py_DECREF(descr);
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"records", (PyCFunction)(void (*)(void))make_records, METH_FASTCALL,
     "records(cls, topic, partition, msgs, start, offset_of, key_of, value_of)"},
    {"fields", (PyCFunction)(void (*)(void))tuple_fields, METH_FASTCALL,
     "fields(cls, names): cls.<names[i]> reads item i (read-only member descriptors)"},
    {"runs", (PyCFunction)(void (*)(void))scan_runs, METH_FASTCALL,
     "runs(msgs, error_of, partition_of) -> [(partition, start, end, nbytes)] or None"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "zkconsumer.datapath._speedups",
    .m_doc = "The stream's record iterator in C (optional; chunks.py has the same in Python).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&RecordsType) < 0) {
        return NULL;
    }
    return PyModule_Create(&module_def);
}
