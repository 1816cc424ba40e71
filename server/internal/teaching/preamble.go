package teaching

// preamble opens a session's first teaching text. Every line starts with
// "#" so a TSV reader skips it; it is sent once per symbol space because the
// rules do not change between waves, and repeating them would cost tokens on
// every expand.
const preamble = `# plasm teaching table for this session. Send programs to plasm (dry run: plan and verdict, no API calls) or plasm_run (live).
# Output: send only the program text, with real newlines between lines: one expression, or binding lines "name = expr" then one line of comma-separated roots.
# Format: TSV, plasm_expr<TAB>Meaning. plasm_expr is a program shape to adapt; Meaning is guidance (fragments joined by " · "), never syntax.
# Symbols: eN entity, mN method, pN field or parameter, rN relation, vN value domain (metadata only: never write vN in a program). They keep their meaning for the whole session; wire names work too.
# Each eN belongs to one API: the first row of an entity's block names it api:Entity. The same entity name in two APIs gets two eN; copy the eN from the right block.
# Slot rows "pN<TAB>vK · name" give a slot's value domain and wire name; value rows "vK<TAB>type · …" give its type, allowed values and description.
# Fill-ins: $ marks a value you supply ("quoted text", 42, true, null, [a, b]); never send a bare $.
# eN(pK=$) reads one row by its id field pK; the short form eN(42) or eN("abc") works too. Update, delete and action rows use the same receiver.
# ~"text" is a search: replace text with real words, e.g. e2~"login timeout".
# ".." stands for optional parameters left out (listed in Meaning): add the ones you need as pK=value; ".." may stay only as the last argument of a call.
# Grammar:
#   e1 all rows · e1(id) one row · e1{p1=v, p2!=v} query (ops = != > < >= <= ~) · e1~"words" search · e1~"words"{p1=v} scoped search
#   e1(id).r1 follows a relation (from many rows it runs once per row) · e1(id).m1(p1=v) update, delete or action · e1.m2(p1=v) create
#   postfix, applied left to right: .limit(n) .sort(p1) .sort(p1, desc) .filter{p1=v}, then a projection [p1,p2] last
#   bindings: a = e1{p1=v} on its own line; later lines use a, a.limit(1), a.r1, a.m1(…) (once per bound row), and a.p1 as a value; the last line lists the roots to return: a, b (independent roots run in parallel)
#   text values: "quoted", or a heredoc <<TAG, its lines, then TAG alone on a line
#   next page of an earlier result: page(sN_pgM) or page(sN_pgM, limit=50), with the handle the result gave
#   long runs: plasm_run with wait: false answers wait(sN_oM) at once; send wait(sN_oM) for its progress or result, cancel(sN_oM) to stop it
# Composition:
#   project to the fields you need and bound reads with .limit(n); unbounded or unprojected reads, large fan-outs and every mutation get a review verdict
#   dry-run with plasm when unsure: it returns the plan and its verdict without calling any API; a review plan runs live only with the plan_commit_ref (pcN) that dry run gave, or force: true
#   bind a read once and reuse it; one program can return several roots
#   take ids and filter values from earlier results; never guess them
#   a relation to an entity without an eN ("relation e1 → Generation") runs as taught; its rows use wire names; seed that entity with plasm_context to get its eN and rows
`
