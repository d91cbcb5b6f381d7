package textutil

// IsName reports whether s is 1 to 64 ASCII letters, digits or bytes of
// punct, the first a letter or digit: a name that is safe as a folder name
// and as one word of a command (skills, custom agent types). Plain code, not
// a regexp: compiling `{0,63}` at start-up cost ~60 KB in 860 allocations.
func IsName(s, punct string) bool {
	if s == "" || len(s) > 64 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !containsByte(punct, c) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func containsByte(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}
