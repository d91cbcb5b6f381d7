//go:build linux

package repoguard

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// gitlinkMode is the mode of a gitlink (a submodule) in git's index.
const gitlinkMode = 0o160000

var errIndex = errors.New("not a git index git would read")

// indexGitlinks lists the paths of the gitlinks in the content of a git
// index (versions 2 to 4, SHA-1 or SHA-256 object names): host git status
// runs git in each of them that holds a .git. hashLen is 20 or 32.
func indexGitlinks(b []byte, hashLen int) ([]string, error) {
	if len(b) < 12 || string(b[:4]) != "DIRC" {
		return nil, errIndex
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, errIndex
	}
	n := binary.BigEndian.Uint32(b[8:12])
	off := 12
	var links []string
	prev := []byte{}
	for range n {
		start := off
		fixed := 40 + hashLen + 2 // stat data, object name, flags
		if off+fixed > len(b) {
			return nil, errIndex
		}
		mode := binary.BigEndian.Uint32(b[off+24 : off+28])
		flags := binary.BigEndian.Uint16(b[off+40+hashLen : off+fixed])
		off += fixed
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			off += 2
		}
		var name []byte
		if version == 4 {
			// The name is the previous one less a number of bytes (a
			// varint, git's offset encoding), then a NUL-ended suffix.
			strip, k := 0, 0
			for {
				if off+k >= len(b) || k > 8 {
					return nil, errIndex
				}
				c := b[off+k]
				strip = strip<<7 | int(c&0x7f)
				k++
				if c&0x80 == 0 {
					break
				}
				strip++
			}
			off += k
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 || strip > len(prev) {
				return nil, errIndex
			}
			name = append(append([]byte{}, prev[:len(prev)-strip]...), b[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return nil, errIndex
			}
			name = b[off : off+end]
			// Entries are padded with NULs to a multiple of eight bytes.
			off = start + (off+end-start+8)&^7
		}
		prev = name
		if mode&0o170000 == gitlinkMode {
			links = append(links, string(name))
		}
	}
	return links, nil
}
