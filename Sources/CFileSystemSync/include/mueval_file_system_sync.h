#ifndef MUEVAL_FILE_SYSTEM_SYNC_H
#define MUEVAL_FILE_SYSTEM_SYNC_H

/// syncfs(2): writes every dirty page of the file system that holds `fd` to the disk, and reports a writeback
/// error since the last call through this descriptor. -1 with errno ENOSYS where the system has no syncfs.
int mueval_syncfs(int fd);

#endif
