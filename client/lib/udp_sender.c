// udp_sender.c: the UDP input sender of libpartita-client (partita_client.h).
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "digest.h"
#include "partita_client.h"

struct ptc_udp_sender {
  int fd;
  struct sockaddr_storage to;
  socklen_t tolen;
  char *model, *token;
  uint64_t session, sequence;
  uint8_t buf[65536];
};

// The digest itself is wire/'s, which partitad checks with.
int ptc_input_digest(const Partita__V1__InputFrame *f, const char *key, uint8_t out[32]) {
  return wire_input_digest(key, f->model, f->session, f->sequence, f->values, f->n_values,
                           f->index, f->n_index, out)
             ? PTC_ERR_NOMEM
             : PTC_OK;
}

ptc_udp_sender *ptc_udp_open(const char *hostport, const char *model, const char *token,
                             char *err, size_t errlen) {
  char host[256], port_s[16];
  int port;
  if (ptc_split_addr(hostport, host, sizeof(host), &port, err, errlen))
    return NULL;
  snprintf(port_s, sizeof(port_s), "%d", port);
  struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai = NULL;
  int rc = getaddrinfo(host, port_s, &hints, &ai);
  if (rc != 0) {
    snprintf(err, errlen, "%s: %s", hostport, gai_strerror(rc));
    return NULL;
  }
  ptc_udp_sender *u = calloc(1, sizeof(*u));
  if (u) {
    u->fd = -1;
    u->model = strdup(model);
    u->token = strdup(token ? token : "");
    u->fd = socket(ai->ai_family, SOCK_DGRAM, 0);
  }
  if (!u || !u->model || !u->token || u->fd < 0 || ai->ai_addrlen > sizeof(u->to) ||
      getrandom(&u->session, sizeof(u->session), 0) != (ssize_t)sizeof(u->session)) {
    snprintf(err, errlen, "%s: could not open a UDP socket", hostport);
    freeaddrinfo(ai);
    if (u && u->fd >= 0)
      close(u->fd);
    if (u) {
      free(u->model);
      free(u->token);
    }
    free(u);
    return NULL;
  }
  memcpy(&u->to, ai->ai_addr, ai->ai_addrlen);
  u->tolen = ai->ai_addrlen;
  freeaddrinfo(ai);
  return u;
}

int ptc_udp_send(ptc_udp_sender *u, const double *values, size_t n) {
  Partita__V1__InputFrame f = PARTITA__V1__INPUT_FRAME__INIT;
  uint8_t digest[32];
  f.model = u->model;
  f.token = (char *)"";
  f.session = u->session;
  f.sequence = ++u->sequence;
  f.n_values = n;
  f.values = (double *)values;
  if (u->token[0]) {   // the token never travels: a digest under it does
    if (ptc_input_digest(&f, u->token, digest) != PTC_OK)
      return PTC_ERR_NOMEM;
    f.digest.data = digest;
    f.digest.len = sizeof(digest);
  }
  size_t len = partita__v1__input_frame__get_packed_size(&f);
  if (len > sizeof(u->buf))
    return PTC_ERR_ARG;
  partita__v1__input_frame__pack(&f, u->buf);
  ssize_t sent = sendto(u->fd, u->buf, len, 0, (struct sockaddr *)&u->to, u->tolen);
  return sent == (ssize_t)len ? PTC_OK : PTC_ERR_IO;
}

uint64_t ptc_udp_session(const ptc_udp_sender *u) { return u->session; }

void ptc_udp_close(ptc_udp_sender *u) {
  if (!u)
    return;
  close(u->fd);
  free(u->model);
  free(u->token);
  free(u);
}
