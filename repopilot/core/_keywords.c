/* Which of the secret rules' keywords a text holds, in C (optional: repopilot/core/secret_rules.py falls back to
 * its regex, which gives the same set; tests/core/test_secret_keywords.py checks that it does).
 *
 * - present(text, index): the keywords that occur in `text` (a lower-cased text), as a set. `index` holds the
 *   keywords by their first character: a tuple of 128 tuples, the one at ASCII code c holding the keywords that
 *   begin with chr(c) (every keyword is ASCII and not empty: secret_rules.py builds the index only then). One pass
 *   over the text: at each ASCII character, the keywords beginning with it are compared there. The regex tries a
 *   trie of all the keywords at every position, about 70 ns a character; a report of a 50 MB log has 30,000
 *   characters of distinct text to look through.
 *
 * Plain CPython C API, no other dependency. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#define FIRSTS 128

/* What a bucket of keywords (their first character c) can begin with at a place: the set of their second
 * characters (a bit each) and whether one is c alone. A place whose next character begins none of them is passed
 * at once: most characters of a text begin some keyword, few pairs of characters do. */
typedef struct {
    uint64_t second[2];
    int single;
} Starts;

/* Whether every entry of `bucket` is a non-empty ASCII str (else the error is set), and what it can begin with:
 * worked out once a call, the first time a character of the text leads to the bucket. */
static int read_bucket(PyObject *bucket, Starts *starts)
{
    starts->second[0] = starts->second[1] = 0;
    starts->single = 0;
    if (!PyTuple_Check(bucket)) {
        PyErr_SetString(PyExc_TypeError, "present(): each entry of the index must be a tuple of str");
        return 0;
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(bucket); j++) {
        PyObject *k = PyTuple_GET_ITEM(bucket, j);
        if (!PyUnicode_Check(k) || !PyUnicode_IS_COMPACT_ASCII(k) || PyUnicode_GET_LENGTH(k) == 0) {
            PyErr_SetString(PyExc_ValueError, "present(): every keyword must be a non-empty ASCII str");
            return 0;
        }
        if (PyUnicode_GET_LENGTH(k) == 1) {
            starts->single = 1;
        } else {
            Py_UCS1 c2 = PyUnicode_1BYTE_DATA(k)[1];
            starts->second[c2 >> 6] |= (uint64_t)1 << (c2 & 63);
        }
    }
    return 1;
}

/* Whether a keyword of the bucket described by `starts` may begin at `at`, from the character after it. */
static int may_begin(const Starts *starts, int kind, const void *data, Py_ssize_t at, Py_ssize_t n)
{
    if (starts->single)
        return 1;
    if (at + 1 >= n)
        return 0;
    Py_UCS4 c2 = PyUnicode_READ(kind, data, at + 1);
    return c2 < FIRSTS && (starts->second[c2 >> 6] >> (c2 & 63)) & 1;
}

/* Adds to `found` the keywords of `bucket` (their first character already equal to the text's at `at`) that
 * occur at `at` in the `n` characters of `data`; -1 when the set cannot grow. */
static int add_at(PyObject *found, PyObject *bucket, int kind, const void *data, Py_ssize_t at, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(bucket); j++) {
        PyObject *k = PyTuple_GET_ITEM(bucket, j);
        Py_ssize_t len = PyUnicode_GET_LENGTH(k);
        if (len > n - at)
            continue;
        const Py_UCS1 *kd = PyUnicode_1BYTE_DATA(k);
        Py_ssize_t t = 1;
        while (t < len && PyUnicode_READ(kind, data, at + t) == kd[t])
            t++;
        if (t == len && PySet_Add(found, k) < 0)
            return -1;
    }
    return 0;
}

static PyObject *present(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != FIRSTS) {
        PyErr_SetString(PyExc_TypeError, "present(text, index): a str and a tuple of 128 tuples of str");
        return NULL;
    }
    PyObject *text = args[0], *index = args[1];
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    char checked[FIRSTS] = {0};
    Starts starts[FIRSTS];
    PyObject *found = PySet_New(NULL);
    if (found == NULL)
        return NULL;
    for (Py_ssize_t at = 0; at < n; at++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, at);
        if (c >= FIRSTS)
            continue; /* no keyword begins with it: every keyword is ASCII */
        PyObject *bucket = PyTuple_GET_ITEM(index, c);
        if (!checked[c]) {
            if (!read_bucket(bucket, &starts[c]))
                goto error;
            checked[c] = 1;
        }
        if (may_begin(&starts[c], kind, data, at, n) && add_at(found, bucket, kind, data, at, n) < 0)
            goto error;
    }
    return found;
error:
    Py_DECREF(found);
    return NULL;
}

static PyMethodDef methods[] = {
    {"present", (PyCFunction)(void (*)(void))present, METH_FASTCALL,
     "present(text, index) -> the set of the index's keywords that occur in text."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_keywords", "Which of the secret rules' keywords a text holds (core/_keywords.c).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__keywords(void)
{
    return PyModule_Create(&module);
}
