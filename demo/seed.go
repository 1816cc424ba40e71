package demo

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// DefaultSeed is the seed used when Options.Seed is zero. Changing it changes
// every seeded row, and with it the golden files and any documentation that
// quotes demo ids.
const DefaultSeed uint64 = 0x706c61736d64 // "plasmd"

// seedEpoch anchors every seeded timestamp so that data does not drift with
// the wall clock.
var seedEpoch = time.Date(2025, time.March, 3, 9, 0, 0, 0, time.UTC)

// Independent PCG streams per API: adding a row to one dataset must not
// reshuffle the other.
const (
	trackerStream uint64 = 1
	kanbanStream  uint64 = 2
)

const (
	seedTrackerIssues   = 60
	seedTrackerComments = 150
	seedKanbanIssues    = 40
)

var trackerUserSeeds = []struct{ name, handle, role string }{
	{"Ada Okafor", "ada", "engineer"},
	{"Bruno Lindqvist", "bruno", "engineer"},
	{"Chen Wei", "chen", "manager"},
	{"Dara Murphy", "dara", "designer"},
	{"Emeka Nwosu", "emeka", "engineer"},
	{"Farah Haddad", "farah", "support"},
	{"Gabriela Souza", "gabi", "engineer"},
	{"Hiro Tanaka", "hiro", "manager"},
}

var trackerProjectSeeds = []struct{ key, name, description string }{
	{"CORE", "Core Platform", "Accounts, sessions, billing and the public **REST API**."},
	{"WEB", "Web App", "The browser client: dashboards, settings and onboarding."},
	{"MOB", "Mobile", "iOS and Android apps, push notifications and offline sync."},
	{"OPS", "Infrastructure", "Deploys, backups, monitoring and on-call tooling."},
}

var trackerLabelSeeds = []struct{ name, color, description string }{
	{"bug", "#d73a4a", "Something is broken"},
	{"feature", "#a2eeef", "New behaviour users asked for"},
	{"docs", "#0075ca", "Documentation only"},
	{"perf", "#fbca04", "Latency, memory or throughput"},
	{"security", "#b60205", "Confidentiality, integrity or access control"},
	{"ux", "#c5def5", "Look, feel and usability"},
	{"chore", "#ededed", "Maintenance with no user-visible change"},
}

// issueKinds drives the wording of a generated issue and its label, so that
// titles, descriptions and labels agree and search for "crash" or
// "latency" finds plausible rows. weight is out of the sum of all weights.
type issueKind struct {
	kind, label string
	weight      int
}

var issueKinds = []issueKind{
	{"bug", "bug", 35},
	{"feature", "feature", 25},
	{"perf", "perf", 12},
	{"docs", "docs", 10},
	{"security", "security", 8},
	{"chore", "chore", 10},
}

var issueSubjects = []struct {
	name      string
	ux        bool // user-facing enough to earn the ux label
	sensitive bool // a bug here is often a security issue too
}{
	{"login flow", true, true},
	{"session cache", false, true},
	{"search index", false, false},
	{"export endpoint", false, false},
	{"billing webhook", false, false},
	{"rate limiter", false, false},
	{"audit log", false, true},
	{"dashboard charts", true, false},
	{"CSV import", false, false},
	{"password reset", true, true},
	{"notification emails", false, false},
	{"API tokens", false, true},
	{"file uploads", false, false},
	{"mobile layout", true, false},
	{"dark mode", true, false},
	{"onboarding wizard", true, false},
	{"permissions model", false, true},
	{"backup job", false, false},
	{"metrics exporter", false, false},
	{"timezone handling", false, false},
}

var issueQualifiers = []string{
	"for large accounts", "on Safari", "after upgrade", "under load",
	"in staging", "for admins", "when offline", "with SSO", "", "", "",
}

var bugSymptoms = []string{
	"returns a 500 error", "times out after 30 seconds", "drops the last row",
	"shows stale data", "crashes the worker", "leaks memory",
	"double-counts totals", "ignores the selected timezone",
}

var bugContexts = []string{
	"This started after the 4.2 release.",
	"Reported by a customer on the enterprise plan.",
	"It only happens when the cache is cold.",
	"We see it roughly once per hour in production logs.",
	"Retrying usually succeeds, which hides the problem.",
	"The crash report points at a nil map in the handler.",
}

var featureWants = []struct{ verb, noun string }{
	{"filter results by date", "a date filter"},
	{"export results as CSV", "CSV export"},
	{"receive a weekly summary", "a weekly summary e-mail"},
	{"undo the last change", "undo"},
	{"share a read-only link", "read-only sharing links"},
	{"bulk edit selected rows", "bulk editing"},
}

var commentBank = []string{
	"I can reproduce this in staging with a fresh account.",
	"Fixed in the latest build, please verify.",
	"Bumping priority: support gets several tickets a week about this.",
	"I'll take this one.",
	"Could we add a regression test before closing?",
	"Logs attached; the error starts right after the deploy.",
	"Is this the same root cause as the timeout we saw last sprint?",
	"Design review done, the mockups are linked in the spec.",
	"Latency dropped from 900 ms to 120 ms with the new index.",
	"Blocked on the SSO vendor answering our ticket.",
	"Let's split this: the docs part can ship now.",
	"Confirmed on Safari and Firefox, Chrome is fine.",
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// seedTracker builds the tracker dataset. Ids are dense and 1-based so that
// documentation and tests can name rows ("iss-17") without looking them up.
func seedTracker(seed uint64) *trackerStore {
	r := rand.New(rand.NewPCG(seed, trackerStream))
	s := newTrackerStore()

	for i, u := range trackerUserSeeds {
		s.addUser(&trackerUser{
			Num:       i + 1,
			Name:      u.name,
			Handle:    u.handle,
			Email:     u.handle + "@example.com",
			Role:      u.role,
			CreatedAt: seedEpoch.AddDate(0, 0, -400+i*11),
		})
	}
	for i, l := range trackerLabelSeeds {
		s.addLabel(&trackerLabel{Num: i + 1, Name: l.name, Color: l.color, Description: l.description})
	}
	for i, p := range trackerProjectSeeds {
		members := r.Perm(len(trackerUserSeeds))[:3+r.IntN(3)]
		sort.Ints(members)
		ids := make([]string, len(members))
		for j, m := range members {
			ids[j] = userID(m + 1)
		}
		s.addProject(&trackerProject{
			Num:         i + 1,
			Key:         p.key,
			Name:        p.name,
			Description: p.description,
			MemberIDs:   ids,
			CreatedAt:   seedEpoch.AddDate(0, 0, -300+i*30),
		})
	}

	at := seedEpoch
	for n := 1; n <= seedTrackerIssues; n++ {
		at = at.Add(time.Duration(2+r.IntN(38)) * time.Hour)
		proj := s.projects[r.IntN(len(s.projects))]
		kind := weightedKind(r)
		subj := pick(r, issueSubjects)
		title, body := issueText(r, kind.kind, subj.name)
		labels := []string{labelIDByName(kind.label)}
		if subj.ux && (kind.kind == "bug" || kind.kind == "feature") {
			labels = append(labels, labelIDByName("ux"))
		}
		if subj.sensitive && kind.kind == "bug" && r.IntN(2) == 0 {
			labels = append(labels, labelIDByName("security"))
		}
		iss := &trackerIssue{
			Num:       n,
			ProjectID: proj.id(),
			Title:     title,
			Body:      body,
			Status:    weightedStatus(r),
			Priority:  weightedPriority(r),
			LabelIDs:  labels,
			CreatedAt: at,
		}
		if r.IntN(7) != 0 {
			iss.AssigneeID = pick(r, proj.MemberIDs)
		}
		iss.UpdatedAt = at.Add(time.Duration(r.IntN(240)) * time.Hour)
		if iss.Status == statusClosed {
			closed := iss.UpdatedAt
			iss.ClosedAt = &closed
		}
		s.addIssue(iss)
	}
	s.nextIssue = seedTrackerIssues + 1

	comments := make([]*trackerComment, 0, seedTrackerComments)
	for range seedTrackerComments {
		iss := s.issues[r.IntN(len(s.issues))]
		comments = append(comments, &trackerComment{
			IssueID:   iss.id(),
			AuthorID:  userID(1 + r.IntN(len(trackerUserSeeds))),
			Body:      pick(r, commentBank),
			CreatedAt: iss.CreatedAt.Add(time.Duration(1+r.IntN(300)) * time.Hour),
		})
	}
	// Number comments in time order, as a real tracker would have.
	sort.SliceStable(comments, func(i, j int) bool { return comments[i].CreatedAt.Before(comments[j].CreatedAt) })
	for i, c := range comments {
		c.Num = i + 1
		s.addComment(c)
	}
	s.nextComment = len(comments) + 1
	return s
}

func weightedStatus(r *rand.Rand) string {
	switch x := r.IntN(20); {
	case x < 9:
		return statusOpen
	case x < 14:
		return statusInProgress
	default:
		return statusClosed
	}
}

func weightedPriority(r *rand.Rand) int {
	switch x := r.IntN(10); {
	case x < 1:
		return 1
	case x < 4:
		return 2
	case x < 8:
		return 3
	default:
		return 4
	}
}

func weightedKind(r *rand.Rand) (k issueKind) {
	total := 0
	for _, k := range issueKinds {
		total += k.weight
	}
	x := r.IntN(total)
	for _, k = range issueKinds {
		if x < k.weight {
			return k
		}
		x -= k.weight
	}
	return k
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func withQualifier(r *rand.Rand, title string) string {
	if q := pick(r, issueQualifiers); q != "" {
		return title + " " + q
	}
	return title
}

// issueText writes a title and a short Markdown description from the same
// picks, so that both say the same thing.
func issueText(r *rand.Rand, kind, subject string) (title, body string) {
	var b strings.Builder
	switch kind {
	case "bug":
		symptom := pick(r, bugSymptoms)
		title = withQualifier(r, capitalize(subject)+" "+symptom)
		fmt.Fprintf(&b, "The %s %s. %s\n\n", subject, symptom, pick(r, bugContexts))
		fmt.Fprintf(&b, "## Steps to reproduce\n1. Sign in as a regular user.\n2. Open the %s.\n3. Wait a few seconds.\n\n", subject)
		b.WriteString("**Expected:** the page loads normally.\n")
	case "feature":
		want := pick(r, featureWants)
		title = "Add " + want.noun + " to the " + subject
		fmt.Fprintf(&b, "Users want to %s from the %s.\n\n", want.verb, subject)
		b.WriteString("## Acceptance\n- [ ] behind a feature flag\n- [ ] covered by a test\n- [ ] changelog entry\n")
	case "perf":
		title = withQualifier(r, "Reduce "+subject+" latency")
		p95 := 400 + r.IntN(1200)
		fmt.Fprintf(&b, "p95 latency of the %s is %d ms; the target is %d ms.\n\n", subject, p95, p95/4)
		b.WriteString("Profiling shows most time spent in JSON encoding and a missing database index.\n")
	case "docs":
		title = "Document how to configure the " + subject
		fmt.Fprintf(&b, "The README does not explain how the %s is configured.\n\n", subject)
		b.WriteString("Add an example, the defaults, and a troubleshooting section.\n")
	case "security":
		if r.IntN(2) == 0 {
			title = capitalize(subject) + " reads records across tenants"
			fmt.Fprintf(&b, "The %s does not check the tenant before reading records.\n\n", subject)
			b.WriteString("Add the tenant check and an access-control test.\n")
		} else {
			title = capitalize(subject) + " logs API tokens in plain text"
			fmt.Fprintf(&b, "Debug logs of the %s contain full API tokens.\n\n", subject)
			b.WriteString("Redact tokens in logs and rotate the affected ones.\n")
		}
	default:
		title = "Move " + subject + " to the new module layout"
		fmt.Fprintf(&b, "The %s still uses the legacy module layout.\n\n", subject)
		b.WriteString("Move it behind the new interface; no user-visible change expected.\n")
	}
	return title, b.String()
}

var kanbanTeamSeeds = []struct{ key, name string }{
	{"PLT", "Platform"},
	{"GRW", "Growth"},
	{"DSN", "Design"},
}

var kanbanUserSeeds = []string{
	"Ines Moreau", "Jonas Becker", "Kavya Iyer", "Liam O'Brien", "Mei Lin", "Nadia Petrova",
}

var kanbanTitleVerbs = []string{"Ship", "Prototype", "Review", "Polish", "Spike on", "Clean up", "Measure", "Redesign"}

var kanbanTitleObjects = []string{
	"pricing page", "signup funnel", "referral program", "icon set",
	"deploy pipeline", "feature flags", "trial emails", "empty states",
	"status page", "A/B test framework", "design tokens", "usage analytics",
}

var kanbanEstimates = []int{1, 2, 3, 5, 8}

// seedKanban builds the kanban dataset.
func seedKanban(seed uint64) *kanbanStore {
	r := rand.New(rand.NewPCG(seed, kanbanStream))
	s := newKanbanStore()
	for i, t := range kanbanTeamSeeds {
		s.addTeam(&kanbanTeam{Num: i + 1, Key: t.key, Name: t.name})
	}
	for i, name := range kanbanUserSeeds {
		handle := strings.ToLower(strings.Fields(name)[0])
		s.addUser(&kanbanUser{Num: i + 1, Name: name, Email: handle + "@kanban.example.com"})
	}
	at := seedEpoch.AddDate(0, 0, 14)
	for n := 1; n <= seedKanbanIssues; n++ {
		at = at.Add(time.Duration(3+r.IntN(45)) * time.Hour)
		iss := &kanbanIssue{
			Num:       n,
			Title:     pick(r, kanbanTitleVerbs) + " " + pick(r, kanbanTitleObjects),
			TeamID:    kanbanTeamID(1 + r.IntN(len(kanbanTeamSeeds))),
			CreatedAt: at,
		}
		switch x := r.IntN(10); {
		case x < 4:
			iss.State = stateTodo
		case x < 7:
			iss.State = stateDoing
		default:
			iss.State = stateDone
		}
		if r.IntN(10) != 0 {
			e := pick(r, kanbanEstimates)
			iss.Estimate = &e
		}
		if r.IntN(5) != 0 {
			iss.AssigneeID = kanbanUserID(1 + r.IntN(len(kanbanUserSeeds)))
		}
		s.addIssue(iss)
	}
	s.nextIssue = seedKanbanIssues + 1
	return s
}
