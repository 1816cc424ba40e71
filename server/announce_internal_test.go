package server

import (
	"reflect"
	"testing"
)

func TestDiffDigests(t *testing.T) {
	tests := []struct {
		name     string
		old, cur map[string]string
		want     []digestChange
	}{
		{"same", map[string]string{"a": "1"}, map[string]string{"a": "1"}, nil},
		{"changed", map[string]string{"a": "1"}, map[string]string{"a": "2"}, []digestChange{{"a", "changed", "2"}}},
		{"added and removed", map[string]string{"a": "1", "c": "3"}, map[string]string{"b": "2", "c": "3"},
			[]digestChange{{"b", "added", "2"}, {"a", "removed", "1"}}},
		{"all new", nil, map[string]string{"b": "2", "a": "1"}, []digestChange{{"a", "added", "1"}, {"b", "added", "2"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := diffDigests(tc.old, tc.cur); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
