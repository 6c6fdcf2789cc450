; Unified Sketch highlighting

(comment) @comment
(string) @string
(integer) @number
(float) @number.float
[(true) (false)] @boolean
(none) @constant.builtin
(dtype) @type.builtin

[
  "sketch" "symbols" "tensors" "constexpr" "params" "bind"
] @keyword

["for" "in"] @keyword.repeat
["if" "elif" "else"] @keyword.conditional
(pass_statement) @keyword
["not" "and" "or"] @keyword.operator
["load" "store"] @function.builtin

(sketch name: (identifier) @module)
(symbols_section symbol: (identifier) @constant)
(tensor_declaration name: (identifier) @variable.parameter)
(constexpr_declaration name: (identifier) @constant)
(param_declaration name: (identifier) @variable.parameter)
(for_statement variable: (identifier) @variable)
(binding name: (identifier) @variable.parameter)

(decorator "@" @attribute name: (identifier) @attribute)

(call function: (identifier) @function.builtin
  (#any-of? @function.builtin "alloc" "range" "tune" "ceil" "min" "max" "arange"))
(binding value: (call function: (identifier) @function.builtin
  (#any-of? @function.builtin "input" "output" "weight" "attr" "init")))
(call function: (identifier) @function.call)

(keyword_argument name: (identifier) @variable.parameter)

[
  "+" "-" "*" "/" "//" "%" "**" "|" "^" "&" "<<" ">>" "~"
  "<" "<=" ">" ">=" "==" "!=" "=" "+=" "-=" "*=" "/=" "->"
] @operator

["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," ";" ":"] @punctuation.delimiter
