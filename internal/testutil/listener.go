package testutil

import (
	"net"
	"testing"
)

// Listener is a TCP listener on 127.0.0.1 that accepts and closes every
// connection, for tests that check whether something can reach the network.
// It is closed when the test ends.
func Listener(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}
