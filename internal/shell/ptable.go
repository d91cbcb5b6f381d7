package shell

// procInfo is one row of the process table.
type procInfo struct {
	pid, ppid, pgid, sid int
}

// ptable is a snapshot of the processes visible to us, by pid.
type ptable map[int]procInfo

// descendants returns the pids below root (not root itself).
func (t ptable) descendants(root int) map[int]bool {
	children := make(map[int][]int, len(t))
	for _, p := range t {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	out := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !out[c] && c != root {
				out[c] = true
				queue = append(queue, c)
			}
		}
	}
	return out
}
