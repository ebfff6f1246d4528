// listen.c: the listening sockets (listen.h); each accepted connection goes to conn_accept.
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr.h"
#include "base/log.h"
#include "net/listen.h"

int listen_tcp(net *n, const char *addr) {
  char host[128];
  int port;
  if (wire_split_addr(addr, host, sizeof(host), &port)) {
    log_error("listen: bad address '%s' (HOST:PORT)", addr);
    return -1;
  }
  struct sockaddr_storage ss;
  int rc = strchr(host, ':') ? uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss)
                             : uv_ip4_addr(host, port, (struct sockaddr_in *)&ss);
  if (rc == 0)
    rc = uv_tcp_init(n->loop, &n->tcp);
  if (rc == 0) {
    n->has_tcp = 1;
    n->tcp.data = n;
    rc = uv_tcp_bind(&n->tcp, (struct sockaddr *)&ss, 0);
  }
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&n->tcp, 128, conn_accept);
  if (rc < 0) {
    log_error("listen %s: %s", addr, uv_strerror(rc));
    return -1;
  }
  int len = sizeof(ss);
  uv_tcp_getsockname(&n->tcp, (struct sockaddr *)&ss, &len);
  int actual = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
  log_info("listening on tcp %s port %d", host, actual);
  return 0;
}

// The Unix socket is for the daemon's user and the socket group (rw-rw----), before anyone
// can connect: a client that can write to it can drive the models.
static int socket_access(const char *path, const char *group) {
  gid_t gid = (gid_t)-1;
  if (group[0]) {
    struct group *g = getgrnam(group);
    if (!g) {
      log_error("socket %s: no group named '%s' (socket_group)", path, group);
      return -1;
    }
    gid = g->gr_gid;
  }
  if ((gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0) || chmod(path, 0660) != 0) {
    log_error("socket %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int listen_pipe(net *n, const char *path, const char *group) {
  int rc = uv_pipe_init(n->loop, &n->pipe, 0);
  if (rc == 0) {
    n->has_pipe = 1;
    n->pipe.data = n;
    mode_t old = umask(0117);   // created rw-rw---- at once: no moment open to others
    rc = uv_pipe_bind(&n->pipe, path);
    if (rc == UV_EADDRINUSE) {
      // a socket file left behind by an earlier run: replace it
      uv_fs_t req;
      if (uv_fs_unlink(NULL, &req, path, NULL) == 0)
        rc = uv_pipe_bind(&n->pipe, path);
      uv_fs_req_cleanup(&req);
    }
    umask(old);
  }
  if (rc == 0 && socket_access(path, group))
    return -1;
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&n->pipe, 128, conn_accept);
  if (rc < 0) {
    log_error("socket %s: %s", path, uv_strerror(rc));
    return -1;
  }
  log_info("listening on unix socket %s", path);
  return 0;
}
