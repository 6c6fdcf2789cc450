[
  (sketch)
  (for_statement)
  (if_statement)
  (elif_clause)
  (else_clause)
] @fold
