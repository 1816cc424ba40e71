// Package refbackend is a reference blog backend for tests: deterministic,
// seeded authors, posts and comments served over REST in every pagination
// style plasmd supports (offset, page counter, cursor, Link header, next
// URL) and over GraphQL, with a configurable page size. It also carries the
// catalogs that describe it and an oracle that answers generated programs
// directly from the full data set, so a differential test can check that
// plasmd answers every program exactly as the oracle does.
package refbackend

import (
	"fmt"
	"math/rand/v2"
)

// Author is a blog author.
type Author struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Country string `json:"country"`
}

// Post is a blog post by an author.
type Post struct {
	ID       int    `json:"id"`
	Title    string `json:"title"`
	AuthorID int    `json:"authorId"`
	Views    int    `json:"views"`
	Status   string `json:"status"`
}

// Comment is a comment on a post.
type Comment struct {
	ID     int    `json:"id"`
	PostID int    `json:"postId"`
	Body   string `json:"body"`
	Likes  int    `json:"likes"`
}

// Data is the whole data set, each list in id order (the order the backend
// lists rows in).
type Data struct {
	Authors  []Author
	Posts    []Post
	Comments []Comment
}

// Countries and Statuses are the select values of the data set.
var (
	Countries = []string{"fr", "de", "jp", "br"}
	Statuses  = []string{"draft", "published", "archived"}
	words     = []string{"alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta"}
)

// Sizes of the generated data set.
const (
	NumAuthors  = 12
	NumPosts    = 90
	NumComments = 300
)

// Generate builds the data set for seed. The same seed always yields the
// same data.
func Generate(seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := &Data{}
	for i := 1; i <= NumAuthors; i++ {
		d.Authors = append(d.Authors, Author{ID: i, Name: fmt.Sprintf("Author %d", i), Country: Countries[r.IntN(len(Countries))]})
	}
	for i := 1; i <= NumPosts; i++ {
		// Author 12 has no posts, so hops meet parents without children.
		d.Posts = append(d.Posts, Post{
			ID: i, Title: words[r.IntN(len(words))] + " " + words[r.IntN(len(words))],
			AuthorID: 1 + r.IntN(NumAuthors-1), Views: r.IntN(500), Status: Statuses[r.IntN(len(Statuses))],
		})
	}
	for i := 1; i <= NumComments; i++ {
		// Posts 1..80 only: the last ten posts have no comments.
		d.Comments = append(d.Comments, Comment{ID: i, PostID: 1 + r.IntN(NumPosts-10), Body: "comment " + words[r.IntN(len(words))], Likes: r.IntN(50)})
	}
	return d
}
