// By hand because Glibc's Swift module does not declare syncfs (a GNU extension, visible only with _GNU_SOURCE).
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "mueval_file_system_sync.h"

int mueval_syncfs(int fd) {
#ifdef __linux__
    return syncfs(fd);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}
