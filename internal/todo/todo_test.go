package todo

import "testing"

func TestStore(t *testing.T) {
	var s Store
	var got [][]Item
	s.OnChange(func(it []Item) { got = append(got, it) })
	s.Set([]Item{{Content: "a", Status: Pending}, {Content: "b", Status: Completed}, {Content: "c", Status: InProgress}})
	if u := s.Unfinished(); len(u) != 2 || u[0].Content != "a" || u[1].Content != "c" {
		t.Fatalf("Unfinished = %+v", u)
	}
	items := s.Items()
	items[0].Content = "mutated"
	if s.Items()[0].Content != "a" {
		t.Fatal("Items must return a copy")
	}
	s.Clear()
	if len(s.Items()) != 0 || len(got) != 2 || len(got[1]) != 0 {
		t.Fatalf("after Clear: items=%v notifications=%v", s.Items(), got)
	}
}
