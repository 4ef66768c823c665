/*
 * The fake tools' client, compiled: what HOST_DIR/bin/TOOL runs when a C compiler was found
 * (sim/client_build.py). It does exactly what client.py does, in about a millisecond of CPU
 * where an interpreter start costs fifteen: a probe pack runs some forty fake commands per host,
 * so this start-up is most of the simulator's cost per host.
 *
 * The binary is hard-linked (or copied) as HOST_DIR/bin/TOOL and learns both from its own path
 * (/proc/self/exe). It hands argv, cwd, environment and its open standard streams to the host's
 * tool server (wire.py for the format; through the broker it inherited when it runs inside a
 * walled-in command, else through HOST_DIR/run/tools.sock), passes on the signals it gets, and
 * exits the way the tool did. Where the host has no tool server (a host folder used on its own),
 * it hands over to client.py, which then runs the tool in-process.
 *
 * Built with: cc -O2 -DSCOUT_PYTHON='"..."' -DSCOUT_FAKEHOST_PARENT='"..."' client.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BROKER_FD 1000            /* wire.BROKER_FD */
#define NO_SERVER_STATUS 126      /* client.NO_SERVER_STATUS */
#define VERSION "1"               /* wire.VERSION */
#define SOCKET_DIR "run"          /* wire.SOCKET_DIR */
#define SOCKET_NAME "tools.sock"  /* wire.SOCKET_NAME */

extern char **environ;

static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM};
static int server = -1;

struct buffer {
    char *data;
    size_t used, size;
};

static void put(struct buffer *b, const char *field, int separate) {
    size_t len = strlen(field) + (separate ? 1 : 0);
    if (b->used + len > b->size) {
        b->size = (b->used + len) * 2;
        b->data = realloc(b->data, b->size);
        if (!b->data) {
            perror("fake tool client");
            exit(NO_SERVER_STATUS);
        }
    }
    if (separate)
        b->data[b->used++] = '\0';
    memcpy(b->data + b->used, field, strlen(field));
    b->used += strlen(field);
}

static void pass_on(int sig) {
    char line[16];
    int saved = errno;
    int len = snprintf(line, sizeof line, "k%d\n", sig);
    if (write(server, line, (size_t)len) < 0) {
        /* the tool has already ended; its answer is on the way */
    }
    errno = saved;
}

/* A connection through the inherited broker, or -1 without one (client.py: _brokered). */
static int brokered(void) {
    int type;
    socklen_t len = sizeof type;
    if (getsockopt(BROKER_FD, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET)
        return -1;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return -1;
    char control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {.iov_base = "c", .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &pair[1], sizeof(int));
    int sent = sendmsg(BROKER_FD, &msg, MSG_NOSIGNAL);
    close(pair[1]);
    if (sent < 0) {
        close(pair[0]);
        return -1;
    }
    return pair[0];
}

/* The server's socket; -1 when the host has none, -2 (errno set) when it cannot be reached. */
static int connected(const char *host_dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", host_dir, SOCKET_DIR);
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return errno == ENOENT ? -1 : -2;
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        close(dir);
        return -2;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/%s", dir, SOCKET_NAME);
    int rc = connect(sock, (struct sockaddr *)&addr, sizeof addr);
    int err = errno;
    close(dir);
    if (rc == 0)
        return sock;
    close(sock);
    errno = err;
    return err == ENOENT ? -1 : -2;
}

/* No tool server: client.py runs the tool in this process, as every fake tool once did. */
static void run_here(const char *tool, const char *host_dir, int argc, char **argv) {
    char **args = calloc((size_t)argc + 7, sizeof *args);
    if (!args)
        exit(NO_SERVER_STATUS);
    int n = 0;
    args[n++] = SCOUT_PYTHON;
    args[n++] = "-IS";
    args[n++] = "-c";
    args[n++] = "import sys; sys.path.insert(0, sys.argv[1]); "
                "from fakehost.client import forward; "
                "tool, host_dir = sys.argv[2:4]; del sys.argv[1:4]; "
                "sys.exit(forward(tool, host_dir))";
    args[n++] = SCOUT_FAKEHOST_PARENT;
    args[n++] = (char *)tool;
    args[n++] = (char *)host_dir;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    execv(SCOUT_PYTHON, args);
    fprintf(stderr, "%s: cannot start %s: %s\n", tool, SCOUT_PYTHON, strerror(errno));
    exit(NO_SERVER_STATUS);
}

static int finish(const char *answer) {
    int value = atoi(answer + 1);
    if (answer[0] != 's')
        return value;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, value);
    signal(value, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    kill(getpid(), value);
    return 128 + value;
}

int main(int argc, char **argv) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        perror("fake tool client: /proc/self/exe");
        return NO_SERVER_STATUS;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    const char *tool = slash + 1;
    *slash = '\0';                  /* exe is now HOST_DIR/bin */
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';              /* ... and now HOST_DIR */
    const char *host_dir = exe;

    server = brokered();
    if (server < 0)
        server = connected(host_dir);
    if (server == -1)
        run_here(tool, host_dir, argc, argv);
    if (server < 0) {
        fprintf(stderr, "%s: cannot reach the tool server of this simulated host (%s); "
                "if the simulator stopped, restart it\n", tool, strerror(errno));
        return NO_SERVER_STATUS;
    }

    char named[4] = {0};
    int fds[3], streams = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1) {
            named[streams] = (char)('0' + fd);
            fds[streams++] = fd;
        }
    }
    char cwd[PATH_MAX], count[16];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    snprintf(count, sizeof count, "%d", argc - 1);
    struct buffer body = {0};
    put(&body, VERSION, 0);
    put(&body, tool, 1);
    put(&body, cwd, 1);
    put(&body, named, 1);
    put(&body, count, 1);
    for (int i = 1; i < argc; i++)
        put(&body, argv[i], 1);
    for (char **env = environ; *env; env++)
        put(&body, *env, 1);

    unsigned char header[4] = {(unsigned char)(body.used >> 24), (unsigned char)(body.used >> 16),
                               (unsigned char)(body.used >> 8), (unsigned char)body.used};
    struct iovec iov[2] = {{header, 4}, {body.data, body.used}};
    char control[CMSG_SPACE(3 * sizeof(int))] = {0};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
    if (streams) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(streams * sizeof(int));
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(streams * sizeof(int));
        memcpy(CMSG_DATA(cmsg), fds, streams * sizeof(int));
    }
    if (sendmsg(server, &msg, MSG_NOSIGNAL) < 0) {
        fprintf(stderr, "%s: the simulated host's tool server went away\n", tool);
        return NO_SERVER_STATUS;
    }
    free(body.data);

    struct sigaction action = {.sa_handler = pass_on, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaction(forwarded[i], &action, NULL);

    char answer[64];
    size_t got = 0;
    while (got == 0 || answer[got - 1] != '\n') {
        ssize_t n = recv(server, answer + got, sizeof answer - 1 - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || got + (size_t)n >= sizeof answer - 1) {
            fprintf(stderr, "%s: the simulated host's tool server went away\n", tool);
            return NO_SERVER_STATUS;
        }
        got += (size_t)n;
    }
    answer[got - 1] = '\0';
    return finish(answer);
}
