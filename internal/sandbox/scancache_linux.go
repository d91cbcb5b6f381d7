package sandbox

import "syscall"

// dirStamp is what tells a folder's entries unchanged: its inode and
// change time (ns).
func dirStamp(dir string) (ino uint64, ctime int64, err error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Ino, st.Ctim.Sec*1e9 + st.Ctim.Nsec, nil
}
