// test_urdf_bad.c: malformed URDF documents are refused, each with its own clear message.
// argv[1]: a directory of *.urdf files whose first line is `<!-- expect: SUBSTRING -->`;
// every file must be refused with a message `FILE:LINE: ...` that contains SUBSTRING, and no
// two files may give the same message. Generated documents beyond each limit of pt_load_options
// are refused with their own message. argv[2]: a good URDF, loaded whole (must succeed),
// cut at every byte and with bytes overwritten (must never crash; run under ASan/valgrind).
#include <dirent.h>
#include <unistd.h>

#include "partita.h"
#include "urdf_test.h"

#define MAX_FILES 128

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

// The SUBSTRING of the first line, in buf; 0 if the file does not start with the marker.
static int expectation(const char *text, char *buf, size_t size) {
  const char *pre = "<!-- expect: ";
  if (strncmp(text, pre, strlen(pre)) != 0) return 0;
  const char *s = text + strlen(pre), *e = strstr(s, " -->");
  if (!e || (size_t)(e - s) >= size || memchr(s, '\n', (size_t)(e - s))) return 0;
  memcpy(buf, s, (size_t)(e - s));
  buf[e - s] = '\0';
  return 1;
}

static int check_bad_dir(const char *dir) {
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open %s", dir);
  if (!d) return 0;
  char *names[MAX_FILES];
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < MAX_FILES) {
    size_t l = strlen(de->d_name);
    if (l > 5 && strcmp(de->d_name + l - 5, ".urdf") == 0) names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
  static char msgs[MAX_FILES][sizeof(((pt_error *)0)->msg)];
  for (int i = 0; i < n; i++) {
    char path[1024], expect[512];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    size_t len = 0;
    char *text = read_text(path, &len);
    CHECK(text != NULL, "cannot read %s", path);
    msgs[i][0] = '\0';
    if (!text) continue;
    CHECK(expectation(text, expect, sizeof(expect)), "%s: no `<!-- expect: ... -->` line", path);
    static pt_spec sentinel;
    pt_spec *s = &sentinel;  // the loader must reset it to NULL on failure
    pt_error err = {0};
    int rc = pt_spec_from_urdf(text, len, path, NULL, &s, &err);
    CHECK(rc == PT_EPARSE || rc == PT_EMODEL, "%s: rc %d (%s)", names[i], rc, err.msg);
    CHECK(rc == err.code, "%s: err.code %d vs rc %d", names[i], err.code, rc);
    CHECK(s == NULL, "%s: *out not NULL on failure", names[i]);
    if (rc == PT_OK && s != &sentinel) pt_spec_free(s);
    CHECK(strstr(err.msg, expect) != NULL, "%s: message\n  %s\nlacks\n  %s", names[i], err.msg,
          expect);
    // `FILE:LINE: ` with a real line number.
    size_t pl = strlen(path);
    int line = 0;
    CHECK(strncmp(err.msg, path, pl) == 0 && sscanf(err.msg + pl, ":%d: ", &line) == 1 &&
              line > 0, "%s: message does not start with FILE:LINE: %s", names[i], err.msg);
    snprintf(msgs[i], sizeof(msgs[i]), "%s", err.msg + pl);
    printf("%-24s %s\n", names[i], err.msg + strlen(dir) + 1);
    free(text);
  }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      CHECK(strcmp(msgs[i], msgs[j]) != 0, "%s and %s give the same message", names[i],
            names[j]);
  for (int i = 0; i < n; i++) free(names[i]);
  return n;
}

// Every prefix, and the document with bytes overwritten: refused or accepted, never a crash.
static void check_damaged(const char *path) {
  size_t len = 0;
  char *text = read_text(path, &len);
  CHECK(text != NULL, "cannot read %s", path);
  if (!text) return;
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_urdf(text, len, path, NULL, &s, &err);
  CHECK(rc == PT_OK && s != NULL, "%s: %s", path, err.msg);
  pt_spec_free(s);
  int refused = 0;
  for (size_t cut = 0; cut < len; cut++) {
    s = NULL;
    rc = pt_spec_from_urdf(text, cut, path, NULL, &s, &err);
    if (rc) refused++;
    CHECK((rc == PT_OK) == (s != NULL), "cut %zu: rc %d but spec %p", cut, rc, (void *)s);
    pt_spec_free(s);
  }
  // A prefix that ends before </robot> is not a document.
  CHECK(refused >= (int)(strstr(text, "</robot>") - text), "prefixes refused: %d", refused);
  char *copy = malloc(len);
  unsigned seed = 12345;
  static const char junk[] = "<>/\"=& 0-9.e\n\0xnan";
  for (int trial = 0; copy && trial < 3000; trial++) {
    memcpy(copy, text, len);
    for (int k = 0; k < 1 + trial % 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % len;
      seed = seed * 1103515245u + 12345u;
      copy[at] = junk[(seed >> 8) % (sizeof(junk) - 1)];
    }
    s = NULL;
    rc = pt_spec_from_urdf(copy, len, "damaged.urdf", NULL, &s, &err);
    CHECK((rc == PT_OK) == (s != NULL), "trial %d: rc %d", trial, rc);
    CHECK(rc == PT_OK || strncmp(err.msg, "damaged.urdf:", 13) == 0, "trial %d: %s", trial,
          err.msg);
    pt_spec_free(s);
  }
  free(copy);
  free(text);
}

// libxml2 reports an encoding conversion failure through its global error handler, which
// prints to stderr unless the loader takes it: a client's model text must not write into the
// daemon's log. stderr goes to a temporary file while the documents are loaded.
static void check_nothing_on_stderr(void) {
  static const char *docs[] = {
      // one document over two lines (parenthesized: clang's -Wstring-concatenation)
      ("<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?>\n<robot name=\"a\x1b$B\xff\xff\">\n"
       "</robot>\n"),
      "<?xml version=\"1.0\"?>\n<robot name=\"a\xff\xfe\xc3\">\n</robot>\n",
      "<?xml version=\"1.0\" encoding=\"no-such-encoding\"?>\n<robot name=\"a\"/>\n",
  };
  static const char *expect[] = {"input conversion failed", "not proper UTF-8", "encoding"};
  FILE *tmp = tmpfile();
  CHECK(tmp != NULL, "tmpfile");
  if (!tmp) return;
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  pt_error errs[3];
  int rcs[3];
  for (int i = 0; i < 3; i++) {
    pt_spec *s = NULL;
    rcs[i] = pt_spec_from_urdf(docs[i], strlen(docs[i]), "enc.urdf", NULL, &s, &errs[i]);
    pt_spec_free(s);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  long printed = ftell(tmp) < 0 ? -1 : (fseek(tmp, 0, SEEK_END), ftell(tmp));
  char head[200] = "";
  rewind(tmp);
  size_t got = fread(head, 1, sizeof(head) - 1, tmp);
  head[got] = '\0';
  fclose(tmp);
  CHECK(printed == 0, "libxml2 wrote %ld bytes to stderr: %s", printed, head);
  for (int i = 0; i < 3; i++) {
    CHECK(rcs[i] == PT_EPARSE, "document %d: rc %d", i, rcs[i]);
    CHECK(strstr(errs[i].msg, expect[i]) && !strchr(errs[i].msg, '\n'),
          "document %d: one-line message naming the problem: %s", i, errs[i].msg);
  }
}

// A growing text for the generated documents below.
typedef struct {
  char *p;
  size_t n, cap;
} text_buf;

static void add(text_buf *b, const char *s) {
  size_t k = strlen(s);
  if (b->n + k + 1 > b->cap) {
    b->cap = 2 * (b->n + k + 1);
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->n, s, k + 1);
  b->n += k;
}

static void expect_refused(const text_buf *b, const pt_load_options *opt, const char *want) {
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_urdf(b->p, b->n, "big.urdf", opt, &s, &err);
  CHECK(rc == PT_EPARSE && !s && strstr(err.msg, want), "%s (wanted %s)", err.msg, want);
  pt_spec_free(s);
}

#define LINK                                                                       \
  "<link name=\"l%d\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" " \
  "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
#define JOINT "<joint name=\"j%d\" type=\"revolute\"><parent link=\"l%d\"/><child link=\"l%d\"/>" \
              "</joint>\n"

// The limits of pt_load_options (docs/urdf.md), each refused with its own message.
static void check_limits(void) {
  text_buf b = {0};
  char line[512];
  // XML elements: counted in the raw text, before libxml2 builds a tree.
  add(&b, "<robot name=\"r\">\n");
  for (int i = 0; i < PT_LOAD_MAX_URDF_ELEMENTS; i++) add(&b, "<material/>\n");
  add(&b, "</robot>\n");
  expect_refused(&b, NULL,
                 "big.urdf:100001: robot: more than 100000 XML elements (max_urdf_elements)");
  pt_load_options opt = {.max_urdf_elements = 10};
  expect_refused(&b, &opt, "big.urdf:11: robot: more than 10 XML elements");
  // The same elements in UTF-16 (little-endian, with a byte order mark) count the same.
  b.n = 0;
  add(&b, "<robot name=\"r\">\n");
  for (int i = 0; i < 11; i++) add(&b, "<material/>\n");
  add(&b, "</robot>\n");
  text_buf w = {malloc(2 * b.n + 2), 2 * b.n + 2, 2 * b.n + 2};
  if (!w.p) abort();
  w.p[0] = (char)0xff;
  w.p[1] = (char)0xfe;
  for (size_t i = 0; i < b.n; i++) {
    w.p[2 + 2 * i] = b.p[i];
    w.p[3 + 2 * i] = 0;
  }
  expect_refused(&w, &opt, "big.urdf:11: robot: more than 10 XML elements");
  opt.max_urdf_elements = 100;  // within the limit libxml2 reads it: a robot without links
  expect_refused(&w, &opt, "big.urdf:1: robot: no <link>");
  free(w.p);
  // Links and joints: the defaults, and a caller's limit.
  b.n = 0;
  add(&b, "<robot name=\"r\">\n");
  for (int i = 0; i <= PT_LOAD_MAX_BODIES; i++) {
    snprintf(line, sizeof(line), LINK, i);
    add(&b, line);
  }
  add(&b, "</robot>\n");
  expect_refused(&b, NULL, "big.urdf:1002: robot: more than 1000 links (max_bodies)");
  b.n = 0;
  add(&b, "<robot name=\"r\">\n");
  for (int i = 0; i < 5; i++) {
    snprintf(line, sizeof(line), LINK, i);
    add(&b, line);
  }
  for (int i = 1; i < 5; i++) {
    snprintf(line, sizeof(line), JOINT, i, i - 1, i);
    add(&b, line);
  }
  add(&b, "</robot>\n");
  pt_spec *s = NULL;
  pt_error err = {0};
  CHECK(pt_spec_from_urdf(b.p, b.n, "big.urdf", NULL, &s, &err) == PT_OK && s, "%s", err.msg);
  pt_spec_free(s);
  opt = (pt_load_options){.max_joints = 3};
  expect_refused(&b, &opt, "big.urdf:10: robot: more than 3 joints (max_joints)");
  opt = (pt_load_options){.max_bodies = 4};
  expect_refused(&b, &opt, "big.urdf:6: robot: more than 4 links (max_bodies)");
  // 10 MB of text.
  b.n = 0;
  add(&b, "<robot name=\"r\">\n");
  while (b.n < 10000000) add(&b, "<!-- ............................................... -->\n");
  add(&b, "</robot>\n");
  expect_refused(&b, NULL, "big.urdf:1: robot: text larger than 8388608 bytes (max_text_bytes)");
  free(b.p);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s BAD_DIR GOOD.urdf\n", argv[0]);
    return 2;
  }
  int n = check_bad_dir(argv[1]);
  CHECK(n >= 10, "only %d malformed documents in %s", n, argv[1]);
  check_damaged(argv[2]);
  check_nothing_on_stderr();
  check_limits();
  if (nfail) fprintf(stderr, "%d check(s) failed\n", nfail);
  else printf("urdf bad documents: %d refused with distinct messages\n", n);
  return nfail ? 1 : 0;
}
