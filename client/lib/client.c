// client.c: blocking sockets with poll() timeouts, framing through frame.c.
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#include "addr.h"
#include "frame.h"
#include "partita_client.h"

struct ptc_client {
  int fd;
  uint64_t next_id;
  wire_frame_decoder dec;
  Partita__V1__ServerMessage **events;   // FIFO ring of PTC_EVENT_QUEUE_MAX
  size_t ev_head, ev_count;
  uint64_t ev_dropped;
  char error[256];
};

static int set_error(ptc_client *c, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->error, sizeof(c->error), fmt, ap);
  va_end(ap);
  return rc;
}

const char *ptc_strerror(int rc) {
  switch (rc) {
  case PTC_OK: return "ok";
  case PTC_ERR_IO: return "i/o error";
  case PTC_ERR_TIMEOUT: return "timed out";
  case PTC_ERR_CLOSED: return "connection closed by the server";
  case PTC_ERR_PROTO: return "protocol error";
  case PTC_ERR_NOMEM: return "out of memory";
  case PTC_ERR_ARG: return "invalid argument";
  default: return "unknown error";
  }
}

// The names come from the protocol itself (protobuf-c's descriptor of Status.Code).
const char *ptc_status_name(int code) {
  const ProtobufCEnumValue *v =
      protobuf_c_enum_descriptor_get_value(&partita__v1__status__code__descriptor, code);
  return v ? v->name : "UNKNOWN";
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int remaining(int64_t deadline) {
  if (deadline < 0)
    return -1;
  int64_t r = deadline - now_ms();
  return r < 0 ? 0 : (int)r;
}

// Connect fd to addr within timeout_ms (non-blocking connect + poll), then back to blocking.
static int connect_fd(int fd, const struct sockaddr *addr, socklen_t len, int timeout_ms) {
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  int rc = connect(fd, addr, len);
  if (rc < 0 && errno == EINPROGRESS) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int n;
    do
      n = poll(&p, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    int soerr = 0;
    socklen_t sl = sizeof(soerr);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (n < 0 || soerr) {
      errno = soerr ? soerr : errno;
      return -1;
    }
    rc = 0;
  }
  fcntl(fd, F_SETFL, fl);
  return rc;
}

static ptc_client *client_new(int fd) {
  ptc_client *c = calloc(1, sizeof(*c));
  if (!c)
    return NULL;
  c->events = calloc(PTC_EVENT_QUEUE_MAX, sizeof(*c->events));
  if (!c->events) {
    free(c);
    return NULL;
  }
  c->fd = fd;
  c->next_id = 1;
  wire_frame_decoder_init(&c->dec, WIRE_FRAME_MAX_DEFAULT * 4);
  return c;
}

ptc_client *ptc_connect_tcp(const char *host, int port, int timeout_ms, char *err,
                            size_t errlen) {
  char portstr[16];
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
  snprintf(portstr, sizeof(portstr), "%d", port);
  int gai = getaddrinfo(host, portstr, &hints, &res);
  if (gai) {
    snprintf(err, errlen, "%s: %s", host, gai_strerror(gai));
    return NULL;
  }
  int fd = -1, saved = 0;
  for (ai = res; ai; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
      continue;
    if (connect_fd(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms) == 0)
      break;
    saved = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) {
    snprintf(err, errlen, "connect %s:%d: %s", host, port, strerror(saved ? saved : errno));
    return NULL;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ptc_client *c = client_new(fd);
  if (!c) {
    close(fd);
    snprintf(err, errlen, "out of memory");
  }
  return c;
}

ptc_client *ptc_connect_unix(const char *path, int timeout_ms, char *err, size_t errlen) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(sa.sun_path)) {
    snprintf(err, errlen, "socket path too long: %s", path);
    return NULL;
  }
  memcpy(sa.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect_fd(fd, (struct sockaddr *)&sa, sizeof(sa), timeout_ms) < 0) {
    snprintf(err, errlen, "connect %s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  ptc_client *c = client_new(fd);
  if (!c) {
    close(fd);
    snprintf(err, errlen, "out of memory");
  }
  return c;
}

int ptc_split_addr(const char *hostport, char *host, size_t hostlen, int *port, char *err,
                   size_t errlen) {
  if (wire_split_addr(hostport, host, hostlen, port) != 0 || *port == 0) {
    snprintf(err, errlen, "bad address '%s' (expected HOST:PORT, port 1-65535)", hostport);
    return PTC_ERR_ARG;
  }
  return PTC_OK;
}

ptc_client *ptc_connect_addr(const char *hostport, int timeout_ms, char *err, size_t errlen) {
  char host[256];
  int port;
  if (ptc_split_addr(hostport, host, sizeof(host), &port, err, errlen))
    return NULL;
  return ptc_connect_tcp(host, port, timeout_ms, err, errlen);
}

void ptc_close(ptc_client *c) {
  if (!c)
    return;
  close(c->fd);
  while (c->ev_count) {
    ptc_free(c->events[c->ev_head]);
    c->ev_head = (c->ev_head + 1) % PTC_EVENT_QUEUE_MAX;
    c->ev_count--;
  }
  free(c->events);
  wire_frame_decoder_free(&c->dec);
  free(c);
}

int ptc_fd(const ptc_client *c) { return c->fd; }
const char *ptc_error(const ptc_client *c) { return c->error; }
uint64_t ptc_dropped_events(const ptc_client *c) { return c->ev_dropped; }
void ptc_free(Partita__V1__ServerMessage *m) {
  if (m)
    partita__v1__server_message__free_unpacked(m, NULL);
}

int ptc_send(ptc_client *c, Partita__V1__Request *req) {
  if (!req)
    return set_error(c, PTC_ERR_ARG, "no request");
  if (req->id == 0)
    req->id = c->next_id++;
  size_t len = partita__v1__request__get_packed_size(req);
  uint8_t *buf = malloc(len + WIRE_FRAME_HEADER_MAX);
  if (!buf)
    return set_error(c, PTC_ERR_NOMEM, "out of memory");
  size_t h = wire_varint_encode(len, buf);
  partita__v1__request__pack(req, buf + h);
  size_t off = 0, total = h + len;
  while (off < total) {
    ssize_t n = send(c->fd, buf + off, total - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      free(buf);
      return set_error(c, errno == EPIPE || errno == ECONNRESET ? PTC_ERR_CLOSED : PTC_ERR_IO,
                       "send: %s", strerror(errno));
    }
    off += (size_t)n;
  }
  free(buf);
  return PTC_OK;
}

// Read one whole message from the socket (not from the event queue).
static int read_message(ptc_client *c, Partita__V1__ServerMessage **out, int64_t deadline) {
  for (;;) {
    const uint8_t *msg;
    size_t len;
    wire_frame_status st = wire_frame_next(&c->dec, &msg, &len);
    if (st == WIRE_FRAME_ERROR)
      return set_error(c, PTC_ERR_PROTO, "framing: %s", c->dec.error);
    if (st == WIRE_FRAME_OK) {
      *out = partita__v1__server_message__unpack(NULL, len, msg);
      return *out ? PTC_OK : set_error(c, PTC_ERR_PROTO, "malformed ServerMessage");
    }
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    int n = poll(&p, 1, remaining(deadline));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return set_error(c, PTC_ERR_IO, "poll: %s", strerror(errno));
    if (n == 0)
      return set_error(c, PTC_ERR_TIMEOUT, "timed out waiting for the server");
    uint8_t buf[65536];
    ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return set_error(c, errno == ECONNRESET ? PTC_ERR_CLOSED : PTC_ERR_IO, "recv: %s",
                       strerror(errno));
    if (r == 0)
      return set_error(c, PTC_ERR_CLOSED, "connection closed by the server");
    if (wire_frame_feed(&c->dec, buf, (size_t)r) != WIRE_FRAME_OK)
      return set_error(c, PTC_ERR_PROTO, "framing: %s", c->dec.error);
  }
}

static void queue_event(ptc_client *c, Partita__V1__ServerMessage *m) {
  if (c->ev_count == PTC_EVENT_QUEUE_MAX) {
    ptc_free(c->events[c->ev_head]);
    c->ev_head = (c->ev_head + 1) % PTC_EVENT_QUEUE_MAX;
    c->ev_count--;
    c->ev_dropped++;
  }
  c->events[(c->ev_head + c->ev_count) % PTC_EVENT_QUEUE_MAX] = m;
  c->ev_count++;
}

static Partita__V1__ServerMessage *unqueue_event(ptc_client *c) {
  if (!c->ev_count)
    return NULL;
  Partita__V1__ServerMessage *m = c->events[c->ev_head];
  c->ev_head = (c->ev_head + 1) % PTC_EVENT_QUEUE_MAX;
  c->ev_count--;
  return m;
}

int ptc_recv(ptc_client *c, Partita__V1__ServerMessage **out, int timeout_ms) {
  if ((*out = unqueue_event(c)))
    return PTC_OK;
  return read_message(c, out, timeout_ms < 0 ? -1 : now_ms() + timeout_ms);
}

int ptc_call(ptc_client *c, Partita__V1__Request *req, Partita__V1__ServerMessage **out,
             int timeout_ms) {
  *out = NULL;
  int rc = ptc_send(c, req);
  if (rc)
    return rc;
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    Partita__V1__ServerMessage *m;
    rc = read_message(c, &m, deadline);
    if (rc)
      return rc;
    if (m->msg_case == PARTITA__V1__SERVER_MESSAGE__MSG_RESPONSE && m->response &&
        (m->response->id == req->id || m->response->id == 0)) {
      // id 0: the server refused the connection or the framing, before reading a request
      *out = m;
      return PTC_OK;
    }
    if (m->msg_case == PARTITA__V1__SERVER_MESSAGE__MSG_EVENT)
      queue_event(c, m);
    else
      ptc_free(m);   // a response to an earlier request nobody waits for
  }
}

int ptc_next_event(ptc_client *c, Partita__V1__ServerMessage **out, int timeout_ms) {
  if ((*out = unqueue_event(c)))
    return PTC_OK;
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    Partita__V1__ServerMessage *m;
    int rc = read_message(c, &m, deadline);
    if (rc)
      return rc;
    if (m->msg_case == PARTITA__V1__SERVER_MESSAGE__MSG_EVENT) {
      *out = m;
      return PTC_OK;
    }
    ptc_free(m);
  }
}
