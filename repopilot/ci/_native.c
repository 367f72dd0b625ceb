/* The scanner's per-byte passes in C (optional: repopilot/ci/native.py falls back to the pure-Python forms, which
 * give the same results; tests/ci/test_native.py checks that they do).
 *
 * - strip_ansi(data): what `b"".join(ANSI_BYTES.split(data))` gives (repopilot/ci/lines.py), by memchr for ESC and
 *   memcpy of the runs between, with the interpreter lock released on a big buffer (a thread reading ahead cleans
 *   while the scan's thread works).
 * - Matches: a callable hyperscan's match callback can be (`match_event_handler=`): it keeps each match's end
 *   offset and pattern id in C arrays, so a match costs no Python frame, tuple or list item.
 * - locate(data, first, matches): Scanner._locate's result (flagged lines in order, their pattern ids, the chunk's
 *   newline count, each flagged line's start offset) in one forward pass, newlines counted eight bytes at a time.
 *
 * Plain CPython C API, no other dependency. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define ESC 0x1b
/* Below this a buffer is cleaned without letting the lock go: releasing and taking it back costs more. */
#define NOGIL_FROM (64 * 1024)

/* ---- ANSI escape sequences ------------------------------------------------------------------------------------ */

/* The length of the escape sequence that starts at s[0] == ESC, as ANSI_BYTES matches it there, or 0 when it does
 * not match (the ESC is then kept, as `re.split` keeps it). Each alternative's classes are disjoint from what
 * follows them, so the regex never backtracks into a different match: the greedy runs below are exact. */
static Py_ssize_t escape_length(const unsigned char *s, Py_ssize_t n)
{
    if (n < 2)
        return 0;
    unsigned char c = s[1];
    Py_ssize_t i = 2;
    if (c == '[') { /* CSI: ESC [ [0-?]* [ -/]* [@-~]; else `[` alone is an Fp/Fe/Fs final byte */
        while (i < n && s[i] >= 0x30 && s[i] <= 0x3f)
            i++;
        while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
            i++;
        return (i < n && s[i] >= 0x40 && s[i] <= 0x7e) ? i + 1 : 2;
    }
    if (c == ']') { /* OSC: ESC ] [^BEL ESC \n]* (BEL | ESC \) */
        while (i < n && s[i] != 0x07 && s[i] != ESC && s[i] != '\n')
            i++;
        if (i < n && s[i] == 0x07)
            return i + 1;
        if (i + 1 < n && s[i] == ESC && s[i + 1] == '\\')
            return i + 2;
        return 2;
    }
    if (c == 'P' || c == 'X' || c == '^' || c == '_') { /* DCS, SOS, PM, APC: ... [^ESC \n]* ESC \ */
        while (i < n && s[i] != ESC && s[i] != '\n')
            i++;
        return (i + 1 < n && s[i] == ESC && s[i + 1] == '\\') ? i + 2 : 2;
    }
    if (c >= 0x20 && c <= 0x2f) { /* nF: ESC [ -/]+ [0-~]; nothing else starts with these bytes */
        while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
            i++;
        return (i < n && s[i] >= 0x30 && s[i] <= 0x7e) ? i + 1 : 0;
    }
    return (c >= 0x30 && c <= 0x7e) ? 2 : 0; /* Fp, Fe, Fs: ESC [0-~] */
}

/* Copies `src` without its escape sequences into `dst` (room for all of `src`); returns the bytes written. */
static Py_ssize_t strip_into(const unsigned char *src, Py_ssize_t n, unsigned char *dst)
{
    const unsigned char *p = src, *end = src + n;
    unsigned char *out = dst;
    while (p < end) {
        const unsigned char *esc = memchr(p, ESC, (size_t)(end - p));
        if (esc == NULL) {
            memcpy(out, p, (size_t)(end - p));
            out += end - p;
            break;
        }
        memcpy(out, p, (size_t)(esc - p));
        out += esc - p;
        Py_ssize_t len = escape_length(esc, end - esc);
        if (len == 0) {
            *out++ = ESC;
            len = 1;
        }
        p = esc + len;
    }
    return out - dst;
}

static PyObject *strip_ansi(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *src = view.buf;
    Py_ssize_t n = view.len;
    if (memchr(src, ESC, (size_t)n) == NULL) {
        PyObject *same = PyBytes_CheckExact(arg) ? Py_NewRef(arg) : PyBytes_FromStringAndSize(view.buf, n);
        PyBuffer_Release(&view);
        return same;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t written;
    if (n >= NOGIL_FROM) {
        Py_BEGIN_ALLOW_THREADS
        written = strip_into(src, n, dst);
        Py_END_ALLOW_THREADS
    } else {
        written = strip_into(src, n, dst);
    }
    PyBuffer_Release(&view);
    if (_PyBytes_Resize(&out, written) < 0)
        return NULL;
    return out;
}

/* ---- newlines ------------------------------------------------------------------------------------------------- */

/* The number of '\n' bytes in s[0:n]: eight bytes at a time (a byte of x is zero exactly where the word has a
 * newline; the expression sets that byte's top bit and no other), the rest one by one. The newlines of up to 255
 * words are summed per byte, then the bytes added up at once: `__builtin_popcountll` is a call into libgcc per word
 * where the compiler may not assume the POPCNT instruction (a wheel's baseline x86-64), 142M of a 50 MB scan's
 * 2,537M instructions under callgrind. */
static Py_ssize_t count_newlines(const unsigned char *s, Py_ssize_t n)
{
    const uint64_t ones7 = 0x7f7f7f7f7f7f7f7fULL, nl = 0x0a0a0a0a0a0a0a0aULL;
    const uint64_t low8 = 0x00ff00ff00ff00ffULL, low16 = 0x0001000100010001ULL;
    Py_ssize_t count = 0, i = 0;
    while (i + 8 <= n) {
        uint64_t sums = 0; /* per byte: the newlines of that byte in the words so far, at most 255 */
        Py_ssize_t stop = n - i >= 8 * 255 ? i + 8 * 255 : n;
        for (; i + 8 <= stop; i += 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t x = w ^ nl;
            sums += (~(((x & ones7) + ones7) | x | ones7)) >> 7;
        }
        /* Pairs of bytes into 16-bit lanes (at most 510 each), then the four lanes added up in the top one. */
        uint64_t pairs = (sums & low8) + ((sums >> 8) & low8);
        count += (Py_ssize_t)((pairs * low16) >> 48);
    }
    for (; i < n; i++)
        count += s[i] == '\n';
    return count;
}

/* ---- matches -------------------------------------------------------------------------------------------------- */

typedef struct {
    unsigned long long end;
    unsigned int pid;
} Match;

typedef struct {
    PyObject_HEAD
    Match *items;
    Py_ssize_t len, cap;
} Matches;

static int matches_push(Matches *self, unsigned long long end, unsigned int pid)
{
    if (self->len == self->cap) {
        Py_ssize_t cap = self->cap ? self->cap * 2 : 256;
        Match *items = PyMem_Realloc(self->items, (size_t)cap * sizeof(Match));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->items = items;
        self->cap = cap;
    }
    self->items[self->len].end = end;
    self->items[self->len].pid = pid;
    self->len++;
    return 0;
}

static void Matches_dealloc(Matches *self)
{
    PyMem_Free(self->items);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* hyperscan's callback: (id, from, to, flags, context). Returns None: the scan goes on. */
static PyObject *Matches_call(Matches *self, PyObject *args, PyObject *kwargs)
{
    if (kwargs != NULL || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3) {
        PyErr_SetString(PyExc_TypeError, "Matches(id, from, to, ...) is hyperscan's match callback");
        return NULL;
    }
    unsigned long pid = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(args, 0));
    unsigned long long end = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(args, 2));
    if (PyErr_Occurred())
        return NULL;
    if (matches_push(self, end, (unsigned int)pid) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static Py_ssize_t Matches_len(Matches *self)
{
    return self->len;
}

static PyObject *Matches_pairs(Matches *self, PyObject *unused)
{
    PyObject *out = PyList_New(self->len);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < self->len; i++) {
        PyObject *pair = Py_BuildValue("(KI)", self->items[i].end, self->items[i].pid);
        if (pair == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, pair);
    }
    return out;
}

/* Matches.take_lines(data, mask): the matches whose pattern id has a non-zero byte in `mask` (the prefilters'),
 * taken out of these (the others keep their order) and returned as the lines they fall on in `data` (a piece of
 * whole lines), each once: (those lines joined by newlines, where each starts in `data`, where each starts in the
 * joined bytes). What ci/confirm.py scans again with the exact forms, gathered without a Python step per match. */
static PyObject *Matches_take_lines(Matches *self, PyObject *args)
{
    Py_buffer data, mask;
    if (!PyArg_ParseTuple(args, "y*y*", &data, &mask))
        return NULL;
    const unsigned char *d = data.buf, *m = mask.buf;
    Py_ssize_t size = data.len, n = 0, cap = 0, total = 0, last = -1;
    size_t msize = (size_t)mask.len;
    Py_ssize_t *spans = NULL; /* start, stop of each line, in order */
    PyObject *joined = NULL, *starts = NULL, *offsets = NULL, *out = NULL;
    for (Py_ssize_t i = 0; i < self->len && size > 0; i++) {
        Match it = self->items[i];
        if (it.pid >= msize || !m[it.pid])
            continue;
        Py_ssize_t at = it.end ? (Py_ssize_t)it.end - 1 : 0;
        if (at >= size)
            at = size - 1;
        Py_ssize_t start = at, stop = at;
        while (start > 0 && d[start - 1] != '\n')
            start--;
        if (start == last)
            continue; /* by end offset: a line's matches come together */
        while (stop < size && d[stop] != '\n')
            stop++;
        if (n == cap) {
            Py_ssize_t *grown = PyMem_Realloc(spans, (size_t)(cap ? cap * 2 : 64) * 2 * sizeof(Py_ssize_t));
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            spans = grown;
            cap = cap ? cap * 2 : 64;
        }
        spans[2 * n] = start;
        spans[2 * n + 1] = stop;
        n++;
        total += stop - start + 1;
        last = start;
    }
    joined = PyBytes_FromStringAndSize(NULL, n ? total - 1 : 0);
    starts = PyList_New(n);
    offsets = PyList_New(n);
    if (joined == NULL || starts == NULL || offsets == NULL)
        goto done;
    char *w = PyBytes_AS_STRING(joined);
    Py_ssize_t pos = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t start = spans[2 * k], len = spans[2 * k + 1] - start;
        PyObject *a = PyLong_FromSsize_t(start), *b = PyLong_FromSsize_t(pos);
        if (a == NULL || b == NULL) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            goto done;
        }
        PyList_SET_ITEM(starts, k, a);
        PyList_SET_ITEM(offsets, k, b);
        memcpy(w + pos, d + start, (size_t)len);
        pos += len;
        if (k + 1 < n)
            w[pos++] = '\n';
    }
    out = PyTuple_Pack(3, joined, starts, offsets);
    if (out != NULL) { /* only now are they taken out: on an error these stay as they were */
        Py_ssize_t kept = 0;
        for (Py_ssize_t i = 0; i < self->len; i++) {
            Match it = self->items[i];
            if (it.pid >= msize || !m[it.pid])
                self->items[kept++] = it;
        }
        self->len = kept;
    }
done:
    Py_XDECREF(joined);
    Py_XDECREF(starts);
    Py_XDECREF(offsets);
    PyMem_Free(spans);
    PyBuffer_Release(&data);
    PyBuffer_Release(&mask);
    return out;
}

static PyMethodDef Matches_methods[] = {
    {"pairs", (PyCFunction)Matches_pairs, METH_NOARGS, "The matches as (end offset, pattern id), as found."},
    {"take_lines", (PyCFunction)Matches_take_lines, METH_VARARGS,
     "take_lines(data, mask) -> (joined lines, their starts in data, their starts in the joined bytes), taken out."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Matches_as_sequence = {.sq_length = (lenfunc)Matches_len};

static PyTypeObject MatchesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "repopilot.ci._native.Matches",
    .tp_doc = "Matches of one scan, kept as C arrays; called as hyperscan's match callback.",
    .tp_basicsize = sizeof(Matches),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)Matches_dealloc,
    .tp_call = (ternaryfunc)Matches_call,
    .tp_as_sequence = &Matches_as_sequence,
    .tp_methods = Matches_methods,
};

/* ---- locate --------------------------------------------------------------------------------------------------- */

static int by_end(const void *a, const void *b)
{
    const Match *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The matches of `obj` (a Matches, or a list of (end, pid) tuples) sorted by end, as a new array (*n items). */
static Match *sorted_matches(PyObject *obj, Py_ssize_t *n)
{
    Match *items;
    if (PyObject_TypeCheck(obj, &MatchesType)) {
        Matches *m = (Matches *)obj;
        *n = m->len;
        items = PyMem_Malloc((size_t)(m->len ? m->len : 1) * sizeof(Match));
        if (items == NULL)
            return (Match *)PyErr_NoMemory();
        memcpy(items, m->items, (size_t)m->len * sizeof(Match));
    } else {
        PyObject *seq = PySequence_Fast(obj, "matches: a Matches or a list of (end, pattern id)");
        if (seq == NULL)
            return NULL;
        *n = PySequence_Fast_GET_SIZE(seq);
        items = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(Match));
        if (items == NULL) {
            Py_DECREF(seq);
            return (Match *)PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < *n; i++) {
            PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_TypeError, "matches: (end, pattern id) tuples");
                break;
            }
            items[i].end = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(pair, 0));
            items[i].pid = (unsigned int)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(pair, 1));
            if (PyErr_Occurred())
                break;
        }
        Py_DECREF(seq);
        if (PyErr_Occurred()) {
            PyMem_Free(items);
            return NULL;
        }
    }
    /* hyperscan reports matches by end offset already, almost always: sort only when they are not. */
    for (Py_ssize_t i = 1; i < *n; i++) {
        if (by_end(&items[i - 1], &items[i]) > 0) {
            qsort(items, (size_t)*n, sizeof(Match), by_end);
            break;
        }
    }
    return items;
}

/* Per match: its line (relative to the chunk's first) and that line's start offset; and the chunk's newlines.
 * Touches no Python object: runs without the lock. */
static Py_ssize_t number_lines(const unsigned char *data, Py_ssize_t size, const Match *items, Py_ssize_t n,
                               Py_ssize_t *lines, Py_ssize_t *starts)
{
    Py_ssize_t line = 0, pos = 0, last = -1, start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t end = (Py_ssize_t)(items[i].end < (unsigned long long)size ? items[i].end : (unsigned long long)size);
        Py_ssize_t at = end ? end - 1 : 0;
        if (at > pos) {
            line += count_newlines(data + pos, at - pos);
            pos = at;
        }
        if (line != last) { /* the line's start: the byte after the last newline before `at` */
            Py_ssize_t k = at;
            while (k > 0 && data[k - 1] != '\n')
                k--;
            start = k;
            last = line;
        }
        lines[i] = line;
        starts[i] = start;
    }
    return line + count_newlines(data + pos, size - pos);
}

static PyObject *build_located(Py_ssize_t first, const Match *items, Py_ssize_t n, const Py_ssize_t *lines,
                               const Py_ssize_t *starts, Py_ssize_t newlines)
{
    PyObject *order = PyList_New(0), *by_line = PyDict_New(), *anchors = PyList_New(0);
    PyObject *pids = NULL, *result = NULL;
    if (order == NULL || by_line == NULL || anchors == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i == 0 || lines[i] != lines[i - 1]) {
            PyObject *num = PyLong_FromSsize_t(first + lines[i]);
            PyObject *anchor = num ? Py_BuildValue("(On)", num, starts[i]) : NULL;
            pids = PySet_New(NULL);
            int bad = anchor == NULL || pids == NULL || PyList_Append(anchors, anchor) < 0
                      || PyDict_SetItem(by_line, num, pids) < 0 || PyList_Append(order, num) < 0;
            Py_XDECREF(num);
            Py_XDECREF(anchor);
            Py_XDECREF(pids); /* by_line holds it */
            if (bad)
                goto done;
        }
        PyObject *pid = PyLong_FromUnsignedLong(items[i].pid);
        int bad = pid == NULL || PySet_Add(pids, pid) < 0;
        Py_XDECREF(pid);
        if (bad)
            goto done;
    }
    result = Py_BuildValue("(OOnO)", order, by_line, newlines, anchors);
done:
    Py_XDECREF(order);
    Py_XDECREF(by_line);
    Py_XDECREF(anchors);
    return result;
}

static PyObject *locate(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t first, n = 0;
    PyObject *matches;
    if (!PyArg_ParseTuple(args, "y*nO:locate", &view, &first, &matches))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *lines = NULL, *starts = NULL;
    Match *items = sorted_matches(matches, &n);
    if (items == NULL)
        goto done;
    lines = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    starts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    if (lines == NULL || starts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t newlines;
    if (view.len >= NOGIL_FROM) {
        Py_BEGIN_ALLOW_THREADS
        newlines = number_lines(view.buf, view.len, items, n, lines, starts);
        Py_END_ALLOW_THREADS
    } else {
        newlines = number_lines(view.buf, view.len, items, n, lines, starts);
    }
    result = build_located(first, items, n, lines, starts, newlines);
done:
    PyMem_Free(items);
    PyMem_Free(lines);
    PyMem_Free(starts);
    PyBuffer_Release(&view);
    return result;
}

/* The packed form of `locate`'s result, for a process that scans ahead to hand to the one that works on the lines
 * (ci/ahead.py): a header (newlines, matches) of two int64, then per match in end order its line relative to the
 * chunk's first (int64), its line's start (int64) and its pattern id (int64). */
static PyObject *pack_located(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t n = 0;
    PyObject *matches;
    if (!PyArg_ParseTuple(args, "y*O:pack_located", &view, &matches))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *lines = NULL, *starts = NULL;
    Match *items = sorted_matches(matches, &n);
    if (items == NULL)
        goto done;
    lines = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    starts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((2 + 3 * n) * sizeof(int64_t)));
    if (lines == NULL || starts == NULL || result == NULL) {
        if (result == NULL)
            goto done;
        Py_CLEAR(result);
        PyErr_NoMemory();
        goto done;
    }
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    Py_BEGIN_ALLOW_THREADS
    out[0] = number_lines(view.buf, view.len, items, n, lines, starts);
    out[1] = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        out[2 + 3 * i] = lines[i];
        out[3 + 3 * i] = starts[i];
        out[4 + 3 * i] = items[i].pid;
    }
    Py_END_ALLOW_THREADS
done:
    PyMem_Free(items);
    PyMem_Free(lines);
    PyMem_Free(starts);
    PyBuffer_Release(&view);
    return result;
}

/* `locate(data, first, matches)` from `pack_located(data, matches)`. */
static PyObject *unpack_located(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t first;
    if (!PyArg_ParseTuple(args, "y*n:unpack_located", &view, &first))
        return NULL;
    PyObject *result = NULL;
    const int64_t *in = view.buf;
    Py_ssize_t n = view.len >= 16 ? (Py_ssize_t)in[1] : -1;
    if (n < 0 || view.len != (Py_ssize_t)((2 + 3 * n) * sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError, "not what pack_located gives");
        goto done;
    }
    Match *items = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Match));
    Py_ssize_t *lines = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    Py_ssize_t *starts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    if (items != NULL && lines != NULL && starts != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            lines[i] = (Py_ssize_t)in[2 + 3 * i];
            starts[i] = (Py_ssize_t)in[3 + 3 * i];
            items[i].pid = (unsigned int)in[4 + 3 * i];
            items[i].end = 0;
        }
        result = build_located(first, items, n, lines, starts, (Py_ssize_t)in[0]);
    } else {
        PyErr_NoMemory();
    }
    PyMem_Free(items);
    PyMem_Free(lines);
    PyMem_Free(starts);
done:
    PyBuffer_Release(&view);
    return result;
}

static PyObject *newlines(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t count = count_newlines(view.buf, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

/* glibc keeps the pages of freed buffers in its heap wherever a hole is left; a scan allocates and frees a few
 * 256 KB buffers per piece, and the holes grew a 500 MB scan's peak memory by 3 MB (8 MB in the helper that scans
 * ahead). Giving the free pages back every few MB keeps it flat; elsewhere this does nothing. */
static PyObject *trim(PyObject *module, PyObject *unused)
{
#ifdef __GLIBC__
    int released;
    Py_BEGIN_ALLOW_THREADS
    released = malloc_trim(0);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(released);
#else
    Py_RETURN_FALSE;
#endif
}

/* ---- clean_line ----------------------------------------------------------------------------------------------- */

/* lines.clean_text for one line of a chunk, for the lines whose result the bytes settle without decoding first: no
 * escape code left, at most MAX_LINE bytes (so no cut), an ASCII first byte (no BOM). What it removes is then the
 * runner's fixed-width timestamp or a TIMESTAMP match, both ending on an ASCII byte: the UTF-8 decoder starts afresh
 * after any ASCII byte (no invalid sequence takes one in), so decoding what follows gives the cleaned text's rest.
 * Wherever a character test might differ from a byte test (a non-ASCII byte where `\d` or `str.isdigit` looks: a
 * digit of another script would pass) the answer is "ask Python". */

#define MAX_LINE 4000 /* lines._MAX_LINE: characters kept; a line of at most this many bytes has no more of them */
#define TAB_HEAD 300  /* clean_text looks for a tab in the first this many characters */
#define ASK_PYTHON (-1)

static int all_ascii(const unsigned char *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (s[i] >= 0x80)
            return 0;
    return 1;
}

/* Where TIMESTAMP's time part, `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?`, matching at s[p] ends; 0 when it does
 * not match there, ASK_PYTHON when a non-ASCII byte stands where it wants a digit. Each part is followed by what it
 * cannot take, so the greedy reading is the regex's only one. */
static Py_ssize_t time_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t p)
{
    static const char form[] = "dddd-dd-ddTdd:dd:dd";
    Py_ssize_t q = p;
    for (const char *f = form; *f; f++, q++) {
        if (q >= n)
            return 0;
        if (*f != 'd') {
            if (s[q] != (unsigned char)*f)
                return 0;
        } else if (s[q] >= 0x80) {
            return ASK_PYTHON;
        } else if (s[q] < '0' || s[q] > '9') {
            return 0;
        }
    }
    if (q < n && s[q] == '.') {
        Py_ssize_t r = q + 1;
        while (r < n && s[r] >= '0' && s[r] <= '9')
            r++;
        if (r < n && s[r] >= 0x80)
            return ASK_PYTHON;
        if (r > q + 1)
            q = r;
    }
    if (q >= n || s[q] != 'Z')
        return 0;
    return (q + 1 < n && s[q + 1] == ' ') ? q + 2 : q + 1;
}

/* TIMESTAMP (`^\ufeff?(?:[^\t]*\t[^\t]*\t\ufeff?(?=\d{4}-))?` then the time) on a line whose first byte is ASCII
 * (so no leading BOM) and whose first tab is s[tab] (-1: none): the bytes it takes away, 0 or ASK_PYTHON. The
 * optional group is tried first (`JOB<TAB>STEP<TAB>` of `gh run view --log`, a BOM maybe after it); when the time
 * does not follow it the regex falls back to the time at the start. */
static Py_ssize_t timestamp_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t tab)
{
    if (tab >= 0) {
        const unsigned char *second = memchr(s + tab + 1, '\t', (size_t)(n - tab - 1));
        if (second != NULL) {
            Py_ssize_t p = second - s + 1;
            if (n - p >= 3 && s[p] == 0xef && s[p + 1] == 0xbb && s[p + 2] == 0xbf)
                p += 3;
            Py_ssize_t end = time_at(s, n, p);
            if (end != 0)
                return end;
        }
    }
    return time_at(s, n, 0);
}

/* `text[:4].isdigit()` for a line whose first byte is ASCII: 1, 0 or ASK_PYTHON (a non-ASCII byte among them). */
static int starts_with_digits(const unsigned char *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n && i < 4; i++) {
        if (s[i] >= 0x80)
            return ASK_PYTHON;
        if (s[i] < '0' || s[i] > '9')
            return 0;
    }
    return n > 0;
}

/* The bytes clean_text takes away at the start of line s[0:n], or ASK_PYTHON. */
static Py_ssize_t clean_skip(const unsigned char *s, Py_ssize_t n)
{
    if (n == 0)
        return 0;
    if (n > MAX_LINE || s[0] >= 0x80 || memchr(s, ESC, (size_t)n) != NULL)
        return ASK_PYTHON;
    int digits = starts_with_digits(s, n);
    if (digits < 0)
        return ASK_PYTHON;
    if (digits && n >= 28) {
        /* The runner's fixed-width prefix, checked as clean_text checks it (all ASCII: characters are bytes). */
        if (!all_ascii(s + 4, 24))
            return ASK_PYTHON;
        if (s[4] == '-' && s[10] == 'T' && s[27] == 'Z')
            return (n > 28 && s[28] == ' ') ? 29 : 28;
    }
    const unsigned char *t = memchr(s, '\t', (size_t)n);
    Py_ssize_t tab = t == NULL ? -1 : t - s;
    /* clean_text tries TIMESTAMP when `text[:4].isdigit() or "\t" in text[:300]` (no BOM: the first byte is ASCII).
     * A tab's character index is at most its byte index; past 300 bytes only an ASCII head makes them equal. */
    if (!digits && (tab < 0 || tab >= TAB_HEAD)) {
        if (tab >= 0 && !all_ascii(s, tab))
            return ASK_PYTHON;
        return 0;
    }
    return timestamp_end(s, n, tab);
}

/* clean_line(data, start): lines.clean_text of the line of `data` starting at `start` (up to the next newline or
 * the end), or None where only clean_text can tell. Reads the line in place: no slice of it is made. */
static PyObject *clean_line(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "clean_line(data, start) takes 2 arguments");
        return NULL;
    }
    if (!PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "clean_line: data must be bytes");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t len = PyBytes_GET_SIZE(args[0]);
    if (start < 0 || start > len) {
        PyErr_SetString(PyExc_IndexError, "clean_line: start out of range");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(args[0]) + start;
    const unsigned char *nl = memchr(s, '\n', (size_t)(len - start));
    Py_ssize_t n = nl == NULL ? len - start : nl - s;
    Py_ssize_t skip = clean_skip(s, n);
    if (skip < 0)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8((const char *)s + skip, n - skip, "replace");
}

/* clean_start(raw): lines.clean_start in C (a marker line's start in its bytes, or None): the same tests on the
 * same bytes, without the slice of the head and the Python frame of each test. */
static PyObject *clean_start(PyObject *module, PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "clean_start: raw must be bytes");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    if (memchr(s, ESC, (size_t)n) != NULL || memchr(s, '\t', (size_t)n) != NULL)
        Py_RETURN_NONE;
    if (n >= 29 && all_ascii(s, 29) && s[4] == '-' && s[10] == 'T' && s[27] == 'Z' && starts_with_digits(s, 4) == 1)
        return PyLong_FromLong(s[28] == ' ' ? 29 : 28);
    if (n == 0 || (s[0] < 0x80 && (s[0] < '0' || s[0] > '9')))
        return PyLong_FromLong(0);
    Py_RETURN_NONE;
}

/* ---- module --------------------------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"strip_ansi", strip_ansi, METH_O, "data without its ANSI escape sequences (lines.ANSI_BYTES)."},
    {"locate", locate, METH_VARARGS,
     "locate(data, first, matches) -> (flagged lines, their pattern ids, newlines, line starts)."},
    {"pack_located", pack_located, METH_VARARGS, "pack_located(data, matches) -> bytes: locate's result, packed."},
    {"unpack_located", unpack_located, METH_VARARGS, "unpack_located(packed, first) -> what locate gives."},
    {"newlines", newlines, METH_O, "The number of newline bytes in data."},
    {"clean_line", (PyCFunction)(void (*)(void))clean_line, METH_FASTCALL,
     "clean_line(data, start) -> lines.clean_text of the line at start, or None where only it can tell."},
    {"clean_start", clean_start, METH_O, "clean_start(raw) -> lines.clean_start(raw)."},
    {"trim", trim, METH_NOARGS, "Give the C heap's free pages back to the system (glibc); whether any were."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "The scanner's per-byte passes in C (see repopilot/ci/native.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__native(void)
{
    if (PyType_Ready(&MatchesType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Matches", (PyObject *)&MatchesType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
