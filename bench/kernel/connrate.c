/*
 * The kernel's rate of TCP connections through a pod's rules: a client that connects, as a
 * given uid, to a destination the rules redirect (10.96.0.10:80 → 127.0.0.1:4140 with the Linkerd
 * defaults), and a server listening where the rules send it, in the same network namespace. One
 * connection = connect() (SYN, SYN-ACK, ACK through OUTPUT/POSTROUTING/PREROUTING/INPUT, conntrack
 * and NAT), accept() on the server, and close() on both ends with SO_LINGER 0 (an RST, no
 * TIME_WAIT, so 4-tuples can be reused).
 *
 *   connrate UID DST_IP DST_PORT LISTEN_PORT SECONDS
 *
 * Prints one JSON object: {"connections": N, "seconds": S, "rate": N/S, "errors": E}.
 * Built by bench/kernel.js with `gcc -O2`; run by it inside a throw-away network namespace.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void linger0(int fd) {
  struct linger l = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: connrate UID DST_IP DST_PORT LISTEN_PORT SECONDS\n");
    return 2;
  }
  uid_t uid = (uid_t)atoi(argv[1]);
  const char *dst_ip = argv[2];
  int dst_port = atoi(argv[3]);
  int listen_port = atoi(argv[4]);
  double seconds = atof(argv[5]);

  int ls = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in la = {.sin_family = AF_INET, .sin_port = htons(listen_port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (bind(ls, (struct sockaddr *)&la, sizeof la) < 0 || listen(ls, 4096) < 0) {
    perror("listen");
    return 1;
  }
  pid_t server = fork();
  if (server == 0) {
    /* The server: accept and close, as fast as connections come. It runs as the client's uid so
       that the client may stop it. */
    if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) _exit(1);
    for (;;) {
      int c = accept(ls, NULL, NULL);
      if (c < 0) {
        if (errno == EINTR) continue;
        _exit(1);
      }
      linger0(c);
      close(c);
    }
  }
  close(ls);
  if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) {
    perror("setresuid");
    kill(server, SIGKILL);
    return 1;
  }
  struct sockaddr_in da = {.sin_family = AF_INET, .sin_port = htons(dst_port)};
  inet_pton(AF_INET, dst_ip, &da.sin_addr);
  long n = 0, errors = 0;
  struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
  double t0 = now(), t = t0;
  while (t - t0 < seconds) {
    for (int i = 0; i < 256; i++) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      /* A connect that takes a second counts as an error (a lost SYN would take longer). */
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (connect(fd, (struct sockaddr *)&da, sizeof da) == 0) n++;
      else {
        if (errors++ == 0) fprintf(stderr, "connrate: connect: %s\n", strerror(errno));
      }
      linger0(fd);
      close(fd);
    }
    t = now();
  }
  kill(server, SIGKILL);
  waitpid(server, NULL, 0);
  printf("{\"connections\": %ld, \"seconds\": %.4f, \"rate\": %.1f, \"errors\": %ld}\n", n, t - t0, n / (t - t0), errors);
  return errors > n / 100 ? 1 : 0;
}
