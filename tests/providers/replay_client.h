/* replay_client.h: starting and stopping the loopback replay server (replay_server.py, REPLAY_SERVER
 * from CMake) for the provider tests: it prints "PORT n" when it listens and exits when its stdin
 * closes. Included by one test file each (static state). */
#ifndef AKG_TEST_REPLAY_CLIENT_H
#define AKG_TEST_REPLAY_CLIENT_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int server_port;
static pid_t server_pid;
static int server_stdin = -1;

static int start_server(void)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    const char *py = getenv("AKG_PYTHON") ? getenv("AKG_PYTHON") : "/usr/bin/python3";
    server_pid = fork();
    if (server_pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(py, py, REPLAY_SERVER, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    server_stdin = in[1];
    FILE *f = fdopen(out[0], "r");
    if (!f || fscanf(f, "PORT %d", &server_port) != 1)
        return -1;
    fclose(f);
    return 0;
}

static void stop_server(void)
{
    if (server_stdin >= 0)
        close(server_stdin); /* it exits when its stdin closes */
    int st;
    for (int i = 0; i < 50; i++) {
        if (waitpid(server_pid, &st, WNOHANG) == server_pid)
            return;
        usleep(100000);
    }
    kill(server_pid, SIGKILL);
    waitpid(server_pid, &st, 0);
}

#endif
