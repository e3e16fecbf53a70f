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

static PyObject *
records_next(RecordsObject *self)
{
    if (self->msgs == NULL || self->index >= PyList_GET_SIZE(self->msgs)) {
        return NULL;  /* exhausted: StopIteration without an exception object */
    }
    PyObject *m = PyList_GET_ITEM(self->msgs, self->index);
    Py_INCREF(m);
    PyObject *offset = NULL, *key = NULL, *value = NULL, *record;
    if ((offset = call_one(self->offset_of, m)) == NULL
            || (key = call_one(self->key_of, m)) == NULL
            || (value = call_one(self->value_of, m)) == NULL
            || (record = self->cls->tp_alloc(self->cls, 6)) == NULL) {
        Py_DECREF(m);
        Py_XDECREF(offset);
        Py_XDECREF(key);
        Py_XDECREF(value);
        return NULL;
    }
    Py_INCREF(self->topic);
    PyTuple_SET_ITEM(record, 0, self->topic);
    Py_INCREF(self->partition);
    PyTuple_SET_ITEM(record, 1, self->partition);
    PyTuple_SET_ITEM(record, 2, offset);
    PyTuple_SET_ITEM(record, 3, key);
    PyTuple_SET_ITEM(record, 4, value);
    PyTuple_SET_ITEM(record, 5, m);
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
 * errors out first.
 */
static PyObject *
scan_runs(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "runs() takes 3 arguments (msgs, error_of, "
                     "partition_of), %zd given", nargs);
        return NULL;
    }
    PyObject *msgs = args[0], *error_of = args[1], *partition_of = args[2];
    if (!PyList_Check(msgs)) {
        PyErr_SetString(PyExc_TypeError, "runs(): msgs must be a list");
        return NULL;
    }
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
            PyObject *error = call_one(error_of, m);
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
            if ((partition = call_one(partition_of, m)) == NULL) {
                goto fail;
            }
            if ((size = PyObject_Length(m)) < 0) {
                Py_DECREF(partition);
                goto fail;
            }
        }
        int same = 0;
        if (current != NULL && partition != NULL) {
            same = PyObject_RichCompareBool(current, partition, Py_EQ);
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

static PyMethodDef module_methods[] = {
    {"records", (PyCFunction)(void (*)(void))make_records, METH_FASTCALL,
     "records(cls, topic, partition, msgs, start, offset_of, key_of, value_of)"},
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
