/* LD_PRELOAD shim for the catalogue's quota case (tests/bad_input/run.sh, fs.disk_quota): from
 * its QUOTA_SHIM_AFTER-th call on, allocating disk space (fallocate) fails with EDQUOT, "Disk
 * quota exceeded", as it does for a user whose quota is used up. A real quota cannot be set up
 * here: this kernel's tmpfs has none, and root passes quotas anyway. Giving space back (a hole
 * punched) still works. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

typedef int (*fallocate_fn)(int, int, off_t, off_t);

static int calls;

static int quota_fallocate(const char* name, int fd, int mode, off_t offset, off_t len) {
  static fallocate_fn real;
  if (!real) real = (fallocate_fn)dlsym(RTLD_NEXT, name);
  const char* after = getenv("QUOTA_SHIM_AFTER");
  if (after && !(mode & FALLOC_FL_PUNCH_HOLE) && ++calls >= atoi(after)) {
    errno = EDQUOT;
    return -1;
  }
  return real ? real(fd, mode, offset, len) : (errno = ENOSYS, -1);
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  return quota_fallocate("fallocate", fd, mode, offset, len);
}

int fallocate64(int fd, int mode, off_t offset, off_t len) {
  return quota_fallocate("fallocate64", fd, mode, offset, len);
}
