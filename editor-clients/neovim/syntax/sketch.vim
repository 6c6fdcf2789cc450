" Vim syntax file
" Language:  Unified Sketch (akg kernel designs, *.sketch)
" Fallback highlighting for editors without the tree-sitter parser; it
" follows sketch-grammar/queries/highlights.scm.
if exists('b:current_syntax')
  finish
endif

syn case match

syn keyword sketchKeyword      sketch symbols tensors constexpr params pass
" `bind` opens a header section only before ':'; elsewhere it is a name.
syn match   sketchKeyword      "^\s*\zsbind\ze\s*:"
syn keyword sketchRepeat       for in
syn keyword sketchConditional  if elif else
syn keyword sketchLogical      not and or
syn keyword sketchBoolean      True False
syn keyword sketchNone         None
syn keyword sketchDtype        bool i8 i16 i32 i64 u8 f16 bf16 f32 f64
syn keyword sketchDtype        int8 int16 int32 int64 uint8 float16 bfloat16 float32 float64 fp16 fp32

" Builtins and operations only where they are called.
syn match sketchBuiltin   "\<\%(load\|store\|alloc\|range\|tune\|ceil\|min\|max\|arange\)\ze\s*("
syn match sketchBuiltin   "\<\%(input\|output\|weight\|attr\|init\)\ze\s*("
syn match sketchOperation "\<\%(neg\|abs\|exp2\|exp\|log2\|log\|sqrt\|rsqrt\|tanh\|sigmoid\|relu6\|relu\|leaky_relu\|gelu_tanh\|gelu\|silu\|mish\|softplus\|elu\|selu\|hardtanh\|hardsigmoid\|hardswish\|softsign\|sin\|cos\|erf\|sign\|recip\|floor_div\|floor\|round\|clamp\)\ze\s*("
syn match sketchOperation "\<\%(add\|sub\|mul\|div\|pow\|maximum\|minimum\|logical_and\|logical_or\|lt\|le\|gt\|ge\|eq\|ne\|where\)\ze\s*("
syn match sketchOperation "\<\%(reduce_sum\|reduce_max\|reduce_min\|reduce_mean\|reduce_prod\|reduce_argmax\|argmax\|argmin\|local_cumsum\|local_cumprod\|cumsum\|cumprod\|log_softmax\|softmax\|gemm\|dot\|transpose\|gather\|cast\|fill\|zeros\)\ze\s*("

syn match sketchDecorator "@\s*\h\w*"
syn match sketchSketchName "\%(\<sketch\s\+\)\@<=\h\w*"
syn match sketchKwarg "\<\h\w*\ze\s*=[^=]"

syn match sketchNumber "\<0[xX][0-9a-fA-F_]\+\>"
syn match sketchNumber "\<\d[0-9_]*\>"
syn match sketchFloat  "\<\d[0-9_]*\.[0-9_]*\%([eE][+-]\=\d\+\)\="
syn match sketchFloat  "\.\d[0-9_]*\%([eE][+-]\=\d\+\)\=\>"
syn match sketchFloat  "\<\d[0-9_]*[eE][+-]\=\d\+\>"

syn match sketchOperator "->\|\*\*\|//\|<<\|>>\|[<>!=]=\|[-+*/]=\|[-+*/%|^&~<>=]"

syn region sketchString start=+"+ skip=+\\.+ end=+"+ oneline
syn region sketchString start=+'+ skip=+\\.+ end=+'+ oneline
syn match sketchComment "#.*$" contains=sketchTodo,@Spell
syn keyword sketchTodo TODO FIXME XXX NOTE contained

hi def link sketchKeyword     Keyword
hi def link sketchRepeat      Repeat
hi def link sketchConditional Conditional
hi def link sketchLogical     Operator
hi def link sketchBoolean     Boolean
hi def link sketchNone        Constant
hi def link sketchDtype       Type
hi def link sketchBuiltin     Function
hi def link sketchOperation   Function
hi def link sketchDecorator   PreProc
hi def link sketchSketchName  Structure
hi def link sketchKwarg       Identifier
hi def link sketchNumber      Number
hi def link sketchFloat       Float
hi def link sketchOperator    Operator
hi def link sketchString      String
hi def link sketchComment     Comment
hi def link sketchTodo        Todo

let b:current_syntax = 'sketch'
