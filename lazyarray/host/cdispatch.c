/*
 * The host tier's commonest operations on small host arrays, in C.
 *
 * lazyarray.host.cdispatch builds this module and installs its methods on
 * HostArray in place of the Python ones (lazyarray/host/array.py), which
 * stay their fallbacks: each method here handles only the plainest case of
 * its Python twin (arrays below the deferral and elision sizes, Python
 * numbers, keys of integers and slices) and calls the twin for anything
 * else, so the two give the same answers by construction. What it saves is
 * the interpreter's work around each NumPy call: tenths of a microsecond per
 * operation, as much as NumPy's own call on an array of a thousand elements.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/ufuncobject.h>

/* what install() was given: HostArray, the offsets of its slots, the
 * Python state the twins read and their limits */
static PyTypeObject *host_type;
static Py_ssize_t hv_offset, copy_offset;
static PyObject *modes, *traces, *wide, *pending, *mutation, *numpy_scalars, *wrap;
static Py_ssize_t small_limit, defer_limit, elide_limit;
static PyObject *one;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

enum {
    ADD, RADD, SUB, RSUB, MUL, RMUL, TRUEDIV, RTRUEDIV, POW, RPOW,
    LT, LE, GT, GE, EQ, NE, GETITEM, SETITEM, COPY,
    NEG, POS, ABS, INVERT, IADD, ISUB, IMUL, ITRUEDIV, COUNT
};
static const char *names[COUNT] = {
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__pow__", "__rpow__",
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
    "__getitem__", "__setitem__", "copy",
    "__neg__", "__pos__", "__abs__", "__invert__",
    "__iadd__", "__isub__", "__imul__", "__itruediv__"};
/* the Python twins, by operation */
static PyObject *twins[COUNT];

/* Whether the host tier computes here: the tier in force is not "device"
 * and no la.jit trace is being recorded (the twins' inline test). */
static int host_mode(void)
{
    PyObject *last = PyList_GET_ITEM(modes, PyList_GET_SIZE(modes) - 1);
    if (PyUnicode_CompareWithASCIIString(last, "device") == 0)
        return 0;
    return PyObject_Not(PyList_GET_ITEM(traces, 0)) == 1;
}

/* Whether *v* is a host value the twins compute with one NumPy call: a
 * NumPy scalar, or an ndarray below the deferral and elision sizes. */
static int small_value(PyObject *v)
{
    if (PyArray_CheckExact(v)) {
        npy_intp size = PyArray_SIZE((PyArrayObject *)v);
        return size < defer_limit
               && size * PyArray_ITEMSIZE((PyArrayObject *)v) < elide_limit;
    }
    return PyArray_IsScalar(v, Generic);
}

/* Whether *v* is a Python float or int or a NumPy scalar (an element read):
 * a number NumPy's operations take as they are. */
static int number(PyObject *v)
{
    PyTypeObject *kind = Py_TYPE(v);
    return kind == &PyFloat_Type || kind == &PyLong_Type || PyArray_IsScalar(v, Generic);
}

/* Whether *key* is an integer, a slice or a tuple of those. */
static int plain_key(PyObject *key)
{
    if (PyLong_CheckExact(key) || PySlice_Check(key))
        return 1;
    if (!PyTuple_CheckExact(key))
        return 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(key); k++) {
        PyObject *item = PyTuple_GET_ITEM(key, k);
        if (!PyLong_CheckExact(item) && !PySlice_Check(item))
            return 0;
    }
    return 1;
}

/* NumPy's *result* (a new reference, or NULL) as a host array: small ones
 * and scalars held directly, anything else as lazyarray's wrap() makes it. */
static PyObject *held(PyObject *result)
{
    if (result == NULL)
        return NULL;
    int direct = PyArray_CheckExact(result)
                 ? PyArray_SIZE((PyArrayObject *)result) <= small_limit
                 : PySet_Contains(numpy_scalars, (PyObject *)Py_TYPE(result)) == 1;
    if (!direct) {
        PyObject *wrapped = PyObject_CallOneArg(wrap, result);
        Py_DECREF(result);
        return wrapped;
    }
    PyObject *handle = host_type->tp_alloc(host_type, 0);
    if (handle == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    SLOT(handle, hv_offset) = result;
    Py_INCREF(Py_None);
    SLOT(handle, copy_offset) = Py_None;
    return handle;
}

static PyObject *twin2(int op, PyObject *self, PyObject *other)
{
    PyObject *args[2] = {self, other};
    return PyObject_Vectorcall(twins[op], args, 2, NULL);
}

static PyObject *compute(int op, PyObject *a, PyObject *b)
{
    switch (op) {
    case ADD: case RADD: return PyNumber_Add(a, b);
    case SUB: case RSUB: return PyNumber_Subtract(a, b);
    case MUL: case RMUL: return PyNumber_Multiply(a, b);
    case TRUEDIV: case RTRUEDIV: return PyNumber_TrueDivide(a, b);
    case POW: case RPOW: return PyNumber_Power(a, b, Py_None);
    case LT: return PyObject_RichCompare(a, b, Py_LT);
    case LE: return PyObject_RichCompare(a, b, Py_LE);
    case GT: return PyObject_RichCompare(a, b, Py_GT);
    case GE: return PyObject_RichCompare(a, b, Py_GE);
    case EQ: return PyObject_RichCompare(a, b, Py_EQ);
    default: return PyObject_RichCompare(a, b, Py_NE);
    }
}

/* self <op> other (reflected: other <op> self) for a host array *self*. */
static PyObject *binary(int op, int reflected, PyObject *self, PyObject *other)
{
    if (Py_TYPE(self) != host_type)
        return twin2(op, self, other);
    PyObject *mine = SLOT(self, hv_offset);
    if (mine == NULL || !small_value(mine))
        return twin2(op, self, other);
    PyObject *value;
    PyTypeObject *kind = Py_TYPE(other);
    if (kind == host_type) {
        value = SLOT(other, hv_offset);
        /* (new-axes views may broadcast to large results: the twin asks) */
        if (value == NULL || PyDict_GET_SIZE(wide) || !small_value(value))
            return twin2(op, self, other);
    }
    else if (number(other)) {
        if (!host_mode())
            return twin2(op, self, other);
        value = other;
    }
    else
        return twin2(op, self, other);
    return held(reflected ? compute(op, value, mine) : compute(op, mine, value));
}

#define BINARY(NAME, OP, REFLECTED) \
    static PyObject *NAME(PyObject *self, PyObject *other) \
    { return binary(OP, REFLECTED, self, other); }
BINARY(add, ADD, 0) BINARY(radd, RADD, 1) BINARY(sub, SUB, 0) BINARY(rsub, RSUB, 1)
BINARY(mul, MUL, 0) BINARY(rmul, RMUL, 1) BINARY(truediv, TRUEDIV, 0)
BINARY(rtruediv, RTRUEDIV, 1) BINARY(power, POW, 0) BINARY(rpower, RPOW, 1)
BINARY(lt, LT, 0) BINARY(le, LE, 0) BINARY(gt, GT, 0) BINARY(ge, GE, 0)
BINARY(eq, EQ, 0) BINARY(ne, NE, 0)

/* -self, +self, abs(self), ~self of a host array *self* */
static PyObject *unary(int op, PyObject *self)
{
    PyObject *value;
    if (Py_TYPE(self) != host_type || !host_mode()
            || (value = SLOT(self, hv_offset)) == NULL
            || ((op == NEG || op == ABS) && !small_value(value)))   /* (deferred) */
        return PyObject_CallOneArg(twins[op], self);
    switch (op) {
    case NEG: return held(PyNumber_Negative(value));
    case POS: return held(PyNumber_Positive(value));
    case ABS: return held(PyNumber_Absolute(value));
    default: return held(PyNumber_Invert(value));
    }
}

#define UNARY(NAME, OP) \
    static PyObject *NAME(PyObject *self, PyObject *unused) { return unary(OP, self); }
UNARY(negative, NEG) UNARY(positive, POS) UNARY(absolute, ABS) UNARY(invert, INVERT)

/* (MUTATION[0] += 1: device copies of host buffers are out of date) */
static int count_write(void)
{
    PyObject *count = PyNumber_Add(PyList_GET_ITEM(mutation, 0), one);
    if (count == NULL)
        return -1;
    return PyList_SetItem(mutation, 0, count);
}

/* self <op>= other for a host array *self*: into its buffer */
static PyObject *in_place(int op, PyObject *self, PyObject *other)
{
    PyObject *buffer, *value = NULL;
    if (Py_TYPE(self) == host_type && PyList_GET_SIZE(pending) == 0 && host_mode()
            && (buffer = SLOT(self, hv_offset)) != NULL && PyArray_CheckExact(buffer)) {
        PyTypeObject *kind = Py_TYPE(other);
        if (kind == host_type)
            value = SLOT(other, hv_offset);
        else if (number(other))
            value = other;
    }
    if (value == NULL)
        return twin2(op, self, other);
    PyObject *result;
    switch (op) {
    case IADD: result = PyNumber_InPlaceAdd(buffer, value); break;
    case ISUB: result = PyNumber_InPlaceSubtract(buffer, value); break;
    case IMUL: result = PyNumber_InPlaceMultiply(buffer, value); break;
    default: result = PyNumber_InPlaceTrueDivide(buffer, value);
    }
    if (result == NULL)
        return NULL;
    Py_DECREF(result);
    if (count_write() < 0)
        return NULL;
    return Py_NewRef(self);
}

#define IN_PLACE(NAME, OP) \
    static PyObject *NAME(PyObject *self, PyObject *other) { return in_place(OP, self, other); }
IN_PLACE(iadd, IADD) IN_PLACE(isub, ISUB) IN_PLACE(imul, IMUL) IN_PLACE(itruediv, ITRUEDIV)

static PyObject *getitem(PyObject *self, PyObject *key)
{
    PyObject *buffer;
    if (Py_TYPE(self) != host_type || !plain_key(key) || !host_mode()
        || (buffer = SLOT(self, hv_offset)) == NULL || !PyArray_CheckExact(buffer))
        return twin2(GETITEM, self, key);
    PyObject *result = PyObject_GetItem(buffer, key);
    if (result != NULL && !PyArray_CheckExact(result))
        return result;          /* (an element: NumPy's scalar, as NumPy gives it) */
    return held(result);
}

static PyObject *setitem(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *buffer, *value = NULL;
    if (nargs == 2 && Py_TYPE(self) == host_type && plain_key(args[0])
            && PyList_GET_SIZE(pending) == 0 && host_mode()
            && (buffer = SLOT(self, hv_offset)) != NULL && PyArray_CheckExact(buffer)) {
        PyTypeObject *kind = Py_TYPE(args[1]);
        if (kind == host_type)
            value = SLOT(args[1], hv_offset);
        else if (number(args[1]))
            value = args[1];
    }
    if (value == NULL) {
        PyObject *call[3] = {self, nargs > 0 ? args[0] : NULL, nargs > 1 ? args[1] : NULL};
        return PyObject_Vectorcall(twins[SETITEM], call, nargs + 1, NULL);
    }
    if (PyObject_SetItem(buffer, args[0], value) < 0 || count_write() < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* twin(self, *args, **kwnames's values): a method's call passed on */
static PyObject *forward(PyObject *twin, PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t count = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject **call = PyMem_Malloc((count + 1) * sizeof(PyObject *));
    if (call == NULL)
        return PyErr_NoMemory();
    call[0] = self;
    for (Py_ssize_t k = 0; k < count; k++)
        call[k + 1] = args[k];
    PyObject *result = PyObject_Vectorcall(twin, call, nargs + 1, kwnames);
    PyMem_Free(call);
    return result;
}

static PyObject *copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    PyObject *buffer;
    if (nargs == 0 && kwnames == NULL && Py_TYPE(self) == host_type && host_mode()
            && (buffer = SLOT(self, hv_offset)) != NULL && PyArray_CheckExact(buffer))
        return held(PyArray_NewCopy((PyArrayObject *)buffer, NPY_CORDER));
    return forward(twins[COPY], self, args, nargs, kwnames);
}

/* lazyarray's ufunc objects (lazyarray.api.ufuncs.Ufunc): the class, the
 * Python __call__ and the attribute holding NumPy's ufunc */
static PyTypeObject *ufunc_class, *numpy_ufunc_type;
static PyObject *ufunc_twin, *ufunc_attribute;

/* A lazyarray ufunc called with small host arrays and Python numbers only
 * (one per input, no keywords): NumPy's ufunc of their values. */
static PyObject *ufunc_call(PyObject *self, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && nargs >= 1 && nargs <= 3 && host_mode()) {
        PyObject *ufunc = PyObject_GetAttr(self, ufunc_attribute);
        if (ufunc == NULL)
            return NULL;
        PyObject *values[3];
        int arrays = 0;
        int plain = Py_TYPE(ufunc) == numpy_ufunc_type
                    && ((PyUFuncObject *)ufunc)->nin == nargs
                    && ((PyUFuncObject *)ufunc)->nout == 1;
        for (Py_ssize_t k = 0; plain && k < nargs; k++) {
            PyTypeObject *kind = Py_TYPE(args[k]);
            if (kind == host_type) {
                plain = (values[k] = SLOT(args[k], hv_offset)) != NULL
                        && small_value(values[k]);   /* (large: deferred by the twin) */
                arrays = 1;
            }
            else if (number(args[k]))
                values[k] = args[k];
            else
                plain = 0;
        }
        if (plain) {
            PyObject *result = PyObject_Vectorcall(ufunc, values, nargs, NULL);
            Py_DECREF(ufunc);
            /* (of numbers only: NumPy's scalar, as NumPy gives it) */
            return arrays ? held(result) : result;
        }
        Py_DECREF(ufunc);
    }
    return forward(ufunc_twin, self, args, nargs, kwnames);
}

/* call(function, args): NumPy's *function* of host arrays (pending ones
 * computed), scalars (of the types in the set *scalars*) and lists and
 * tuples of those (np.array([a, b]), np.concatenate([x, y])), positional only, as quick_call of
 * lazyarray.host.dispatch computes it; the object *no* where an argument is
 * anything else (or the host tier is off). */
static PyObject *quick_scalars, *quick_no;

/* *a* as NumPy takes it (a new reference): a host array's value (a pending
 * one computed first), a scalar of the set *scalars* itself, a list or tuple
 * (nested up to *depth* levels) of those with each item so (itself where
 * nothing changed); NULL for anything else, with an exception set only where
 * computing a pending array raised. */
static PyObject *unwrapped(PyObject *a, int depth)
{
    if (Py_TYPE(a) != host_type && PyObject_TypeCheck(a, host_type)) {
        /* a pending host array: computed now (reading _hv does it, and
         * makes it a host array) */
        static PyObject *hv_name;
        if (hv_name == NULL && (hv_name = PyUnicode_InternFromString("_hv")) == NULL)
            return NULL;
        PyObject *value = PyObject_GetAttr(a, hv_name);
        if (value == NULL)
            return NULL;
        Py_DECREF(value);
    }
    if (Py_TYPE(a) == host_type) {
        PyObject *value = SLOT(a, hv_offset);
        return value == NULL ? NULL : Py_NewRef(value);
    }
    if (PySet_Contains(quick_scalars, (PyObject *)Py_TYPE(a)) == 1)
        return Py_NewRef(a);
    int list = PyList_CheckExact(a);
    if (depth == 0 || !(list || PyTuple_CheckExact(a)))
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
    PyObject *items = PyList_New(n);
    if (items == NULL)
        return NULL;
    int same = 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(a, k);
        PyObject *value = unwrapped(item, depth - 1);
        if (value == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        same &= value == item;
        PyList_SET_ITEM(items, k, value);
    }
    if (same) {
        Py_DECREF(items);
        return Py_NewRef(a);
    }
    if (list)
        return items;
    PyObject *tuple = PyList_AsTuple(items);
    Py_DECREF(items);
    return tuple;
}

static PyObject *quick_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "call(function, args)");
        return NULL;
    }
    PyObject *arguments = args[1];
    Py_ssize_t count = PyTuple_GET_SIZE(arguments);
    if (host_type == NULL || quick_scalars == NULL || count > 8 || !host_mode())
        return Py_NewRef(quick_no);
    PyObject *values[8];
    for (Py_ssize_t k = 0; k < count; k++) {
        values[k] = unwrapped(PyTuple_GET_ITEM(arguments, k), 3);
        if (values[k] == NULL) {
            for (Py_ssize_t j = 0; j < k; j++)
                Py_DECREF(values[j]);
            return PyErr_Occurred() ? NULL : Py_NewRef(quick_no);
        }
    }
    PyObject *result = PyObject_Vectorcall(args[0], values, count, NULL);
    PyObject *returned = NULL;
    if (result != NULL && PyArray_CheckExact(result)) {
        /* (a function returning an argument's buffer returns that argument) */
        for (Py_ssize_t k = 0; k < count && returned == NULL; k++) {
            PyObject *a = PyTuple_GET_ITEM(arguments, k);
            if (Py_TYPE(a) == host_type && values[k] == result)
                returned = a;
        }
    }
    for (Py_ssize_t k = 0; k < count; k++)
        Py_DECREF(values[k]);
    if (result == NULL)
        return NULL;
    if (returned != NULL) {
        Py_DECREF(result);
        return Py_NewRef(returned);
    }
    if (PyArray_CheckExact(result)
            || PySet_Contains(numpy_scalars, (PyObject *)Py_TYPE(result)) == 1)
        return held(result);
    PyObject *pair[2] = {result, arguments};
    PyObject *wrapped = PyObject_Vectorcall(wrap, pair, 2, NULL);
    Py_DECREF(result);
    return wrapped;
}

/* install_call(scalars, no): set quick_call's scalar types and its "no" */
static PyObject *install_call(PyObject *module, PyObject *args)
{
    PyObject *scalars, *no;
    if (!PyArg_ParseTuple(args, "OO", &scalars, &no))
        return NULL;
    if (!PyAnySet_Check(scalars)) {
        PyErr_SetString(PyExc_TypeError, "install_call(): scalars must be a set");
        return NULL;
    }
    Py_XSETREF(quick_scalars, Py_NewRef(scalars));
    Py_XSETREF(quick_no, Py_NewRef(no));
    Py_RETURN_NONE;
}

static PyMethodDef ufunc_method = {
    "__call__", (PyCFunction)(void (*)(void))ufunc_call, METH_FASTCALL | METH_KEYWORDS,
    "Call self as a function."};

/* install_ufunc_call(Ufunc, python_call, numpy_ufunc) -> the C __call__ of
 * Ufunc (after install()) */
static PyObject *install_ufunc_call(PyObject *module, PyObject *args)
{
    PyObject *type, *twin, *example;
    if (!PyArg_ParseTuple(args, "O!OO", &PyType_Type, &type, &twin, &example))
        return NULL;
    if (host_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "install_ufunc_call() before install()");
        return NULL;
    }
    Py_XSETREF(ufunc_class, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(ufunc_twin, Py_NewRef(twin));
    Py_XSETREF(numpy_ufunc_type, (PyTypeObject *)Py_NewRef((PyObject *)Py_TYPE(example)));
    if (ufunc_attribute == NULL && (ufunc_attribute = PyUnicode_InternFromString("_ufunc")) == NULL)
        return NULL;
    return PyDescr_NewMethod(ufunc_class, &ufunc_method);
}

static PyMethodDef methods[COUNT + 1] = {
    {"__add__", (PyCFunction)add, METH_O, "Return self+value."},
    {"__radd__", (PyCFunction)radd, METH_O, "Return value+self."},
    {"__sub__", (PyCFunction)sub, METH_O, "Return self-value."},
    {"__rsub__", (PyCFunction)rsub, METH_O, "Return value-self."},
    {"__mul__", (PyCFunction)mul, METH_O, "Return self*value."},
    {"__rmul__", (PyCFunction)rmul, METH_O, "Return value*self."},
    {"__truediv__", (PyCFunction)truediv, METH_O, "Return self/value."},
    {"__rtruediv__", (PyCFunction)rtruediv, METH_O, "Return value/self."},
    {"__pow__", (PyCFunction)power, METH_O, "Return pow(self, value)."},
    {"__rpow__", (PyCFunction)rpower, METH_O, "Return pow(value, self)."},
    {"__lt__", (PyCFunction)lt, METH_O, "Return self<value."},
    {"__le__", (PyCFunction)le, METH_O, "Return self<=value."},
    {"__gt__", (PyCFunction)gt, METH_O, "Return self>value."},
    {"__ge__", (PyCFunction)ge, METH_O, "Return self>=value."},
    {"__eq__", (PyCFunction)eq, METH_O, "Return self==value."},
    {"__ne__", (PyCFunction)ne, METH_O, "Return self!=value."},
    {"__getitem__", (PyCFunction)getitem, METH_O, "Return self[key]."},
    {"__setitem__", (PyCFunction)(void (*)(void))setitem, METH_FASTCALL,
     "Set self[key] to value."},
    {"copy", (PyCFunction)(void (*)(void))copy, METH_FASTCALL | METH_KEYWORDS,
     "copy($self, /, order='C')\n--\n\nA copy of the array."},
    {"__neg__", (PyCFunction)negative, METH_NOARGS, "-self"},
    {"__pos__", (PyCFunction)positive, METH_NOARGS, "+self"},
    {"__abs__", (PyCFunction)absolute, METH_NOARGS, "abs(self)"},
    {"__invert__", (PyCFunction)invert, METH_NOARGS, "~self"},
    {"__iadd__", (PyCFunction)iadd, METH_O, "Return self+=value."},
    {"__isub__", (PyCFunction)isub, METH_O, "Return self-=value."},
    {"__imul__", (PyCFunction)imul, METH_O, "Return self*=value."},
    {"__itruediv__", (PyCFunction)itruediv, METH_O, "Return self/=value."},
    {NULL, NULL, 0, NULL}};

static Py_ssize_t slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyDict_GetItemString(type->tp_dict, name);
    if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s is not a slot of %s", name, type->tp_name);
        return -1;
    }
    return ((PyMemberDescrObject *)descr)->d_member->offset;
}

static void forget(void)
{
    Py_CLEAR(host_type);
    Py_CLEAR(modes); Py_CLEAR(traces); Py_CLEAR(wide); Py_CLEAR(pending);
    Py_CLEAR(mutation); Py_CLEAR(numpy_scalars); Py_CLEAR(wrap);
    for (int k = 0; k < COUNT; k++)
        Py_CLEAR(twins[k]);
}

/* install(HostArray, twins, modes, traces, wide, pending, mutation,
 *         numpy_scalars, wrap, small, defer, elide) -> {name: method} */
static PyObject *install(PyObject *module, PyObject *args)
{
    PyObject *type, *twin_table;
    forget();
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!OOnnn", &PyType_Type, &type,
                          &PyDict_Type, &twin_table, &PyList_Type, &modes,
                          &PyList_Type, &traces, &PyDict_Type, &wide, &PyList_Type, &pending,
                          &PyList_Type, &mutation, &numpy_scalars, &wrap,
                          &small_limit, &defer_limit, &elide_limit))
        return NULL;
    Py_INCREF(modes); Py_INCREF(traces); Py_INCREF(wide); Py_INCREF(pending);
    Py_INCREF(mutation); Py_INCREF(numpy_scalars); Py_INCREF(wrap);
    if (PyList_GET_SIZE(modes) == 0 || PyList_GET_SIZE(traces) == 0
            || PyList_GET_SIZE(mutation) == 0 || !PyAnySet_Check(numpy_scalars)) {
        forget();
        PyErr_SetString(PyExc_ValueError, "install(): unexpected state");
        return NULL;
    }
    host_type = (PyTypeObject *)type;
    Py_INCREF(host_type);
    if ((hv_offset = slot_offset(host_type, "_hv")) < 0
            || (copy_offset = slot_offset(host_type, "_copy")) < 0) {
        forget();
        return NULL;
    }
    PyObject *made = PyDict_New();
    if (made == NULL) {
        forget();
        return NULL;
    }
    for (int k = 0; k < COUNT; k++) {
        twins[k] = PyDict_GetItemString(twin_table, names[k]);
        if (twins[k] == NULL) {
            PyErr_Format(PyExc_KeyError, "install(): no Python %s", names[k]);
            goto failed;
        }
        Py_INCREF(twins[k]);
        PyObject *method = PyDescr_NewMethod(host_type, &methods[k]);
        if (method == NULL || PyDict_SetItemString(made, names[k], method) < 0) {
            Py_XDECREF(method);
            goto failed;
        }
        Py_DECREF(method);
    }
    return made;
failed:
    Py_DECREF(made);
    forget();
    return NULL;
}

/* self[key] = value through the mapping slot (value NULL: del self[key]) */
static int setitem_slot(PyObject *self, PyObject *key, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    PyObject *args[2] = {key, value};
    PyObject *result = setitem(self, args, 2);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* fast_subscripts(): HostArray's mapping slots call getitem and setitem
 * directly (after install()'s methods were set as attributes, which left
 * the slots looking them up; setting either attribute again resets its
 * slot) */
static PyObject *fast_subscripts(PyObject *module, PyObject *unused)
{
    if (host_type == NULL || host_type->tp_as_mapping == NULL
            || !(host_type->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        PyErr_SetString(PyExc_RuntimeError, "fast_subscripts() before install()");
        return NULL;
    }
    host_type->tp_as_mapping->mp_subscript = getitem;
    host_type->tp_as_mapping->mp_ass_subscript = setitem_slot;
    PyType_Modified(host_type);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"fast_subscripts", fast_subscripts, METH_NOARGS,
     "HostArray's mapping slots set to the C getitem and setitem."},
    {"install", install, METH_VARARGS,
     "The C methods of HostArray, by name, with their Python twins as fallbacks."},
    {"install_ufunc_call", install_ufunc_call, METH_VARARGS,
     "The C __call__ of lazyarray's ufunc class, with its Python one as fallback."},
    {"install_call", install_call, METH_VARARGS,
     "Set the scalar types call() takes and what it returns for other arguments."},
    {"call", (PyCFunction)(void (*)(void))quick_call, METH_FASTCALL,
     "NumPy's function of host arrays and scalars, or the 'no' object."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_lazyarray_cdispatch",
    "The host tier's commonest operations in C (see lazyarray.host.cdispatch).",
    -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__lazyarray_cdispatch(void)
{
    import_array();
    if ((one = PyLong_FromLong(1)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
