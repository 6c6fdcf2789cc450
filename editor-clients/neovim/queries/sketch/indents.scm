[
  (for_statement)
  (if_statement)
  (elif_clause)
  (else_clause)
  (sketch)
] @indent.begin

"}" @indent.end
["}" "]" ")"] @indent.branch
