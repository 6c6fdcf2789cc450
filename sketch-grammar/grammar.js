/**
 * Tree-sitter grammar for the Unified Sketch language.
 *
 * A sketch is a header in braces followed by Python-style statements whose
 * blocks are delimited by indentation (INDENT/DEDENT tokens from
 * src/scanner.c). Inside brackets, line breaks are ordinary whitespace.
 */

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  bit_or: 5,
  bit_xor: 6,
  bit_and: 7,
  shift: 8,
  plus: 9,
  times: 10,
  unary: 11,
  power: 12,
  postfix: 13,
};

function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}

function sepBy1(separator, rule) {
  return seq(rule, repeat(seq(separator, rule)));
}

module.exports = grammar({
  name: 'sketch',

  // _bind_keyword is the word `bind` where a `bind:` section can start and
  // a ':' follows it on the line (src/scanner.c); anywhere else `bind` stays
  // an ordinary identifier, so sketches that use it as a name still parse.
  externals: $ => [$._newline, $._indent, $._dedent, $._error_sentinel, $._bind_keyword],

  extras: $ => [$.comment, /[ \t\r\n\f]/],

  word: $ => $.identifier,

  // No `supertypes`: a supertype keeps a node for every expression and
  // statement (one more reduction each), which made the parse ~10% slower.
  // The hidden rules below are still choices, so the visible tree is the same.

  rules: {
    source_file: $ => repeat($.sketch),

    sketch: $ => seq(
      'sketch',
      field('name', $.identifier),
      '{',
      optional(choice(
        seq($._indent, repeat($._item), $._dedent),
        repeat1($._item),
      )),
      '}',
    ),

    _item: $ => choice(
      $.symbols_section,
      $.tensors_section,
      $.constexpr_section,
      $.params_section,
      $.bind_section,
      $._statement,
    ),

    // ---- header sections ----------------------------------------------

    symbols_section: $ => seq(
      'symbols', ':',
      commaSep1(field('symbol', $.identifier)),
      optional(choice(',', ';')),
      $._newline,
    ),

    tensors_section: $ => seq(
      'tensors', ':',
      sepBy1(';', field('tensor', $.tensor_declaration)),
      optional(';'),
      $._newline,
    ),

    tensor_declaration: $ => seq(
      field('name', $.identifier),
      optional(field('shape', $.shape)),
      ':',
      field('dtype', alias($.identifier, $.dtype)),
    ),

    shape: $ => seq('[', optional(seq(commaSep1(field('dimension', $._expression)), optional(','))), ']'),

    constexpr_section: $ => seq(
      'constexpr', ':',
      sepBy1(choice(',', ';'), field('constant', $.constexpr_declaration)),
      optional(choice(',', ';')),
      $._newline,
    ),

    constexpr_declaration: $ => seq(
      field('name', $.identifier),
      optional(seq('=', field('value', $._expression))),
    ),

    params_section: $ => seq(
      'params', ':',
      sepBy1(choice(',', ';'), field('parameter', $.param_declaration)),
      optional(choice(',', ';')),
      $._newline,
    ),

    param_declaration: $ => seq(
      field('name', $.identifier),
      optional(seq(':', field('dtype', alias($.identifier, $.dtype)))),
      optional(seq('=', field('value', $._expression))),
    ),

    // Where each tensor, symbol, param and constexpr comes from in the task:
    // `bind: x = input("x", [B, S, H]), y = output(0)`.
    bind_section: $ => seq(
      alias($._bind_keyword, 'bind'), ':',
      commaSep1(field('binding', $.binding)),
      optional(choice(',', ';')),
      $._newline,
    ),

    binding: $ => seq(
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    // ---- statements ---------------------------------------------------

    _statement: $ => choice(
      seq($._simple_statement, optional(';'), $._newline),
      $.decorator,
      $.for_statement,
      $.if_statement,
    ),

    _simple_statement: $ => choice(
      $.assignment,
      $.load_statement,
      $.store_statement,
      $.expression_statement,
      $.pass_statement,
    ),

    decorator: $ => seq(
      '@',
      field('name', $.identifier),
      field('arguments', $.argument_list),
      $._newline,
    ),

    assignment: $ => seq(
      field('left', choice($.identifier, $.pattern_list)),
      field('operator', choice('=', '+=', '-=', '*=', '/=')),
      field('right', choice($._expression, $.expression_list)),
    ),

    pattern_list: $ => seq($.identifier, repeat1(seq(',', $.identifier))),

    expression_list: $ => seq($._expression, repeat1(seq(',', $._expression))),

    load_statement: $ => seq(
      'load', '(',
      field('source', $._expression),
      '->',
      field('target', $._expression),
      repeat(seq(',', field('option', $.keyword_argument))),
      optional(','),
      ')',
    ),

    store_statement: $ => seq(
      'store', '(',
      field('source', $._expression),
      '->',
      field('target', $._expression),
      repeat(seq(',', field('option', $.keyword_argument))),
      optional(','),
      ')',
    ),

    expression_statement: $ => $._expression,

    pass_statement: _ => 'pass',

    for_statement: $ => seq(
      'for',
      field('variable', $.identifier),
      'in',
      field('iterable', $._expression),
      ':',
      field('body', $.block),
    ),

    if_statement: $ => seq(
      'if',
      field('condition', $._expression),
      ':',
      field('consequence', $.block),
      repeat(field('alternative', $.elif_clause)),
      optional(field('alternative', $.else_clause)),
    ),

    elif_clause: $ => seq(
      'elif',
      field('condition', $._expression),
      ':',
      field('consequence', $.block),
    ),

    else_clause: $ => seq('else', ':', field('body', $.block)),

    block: $ => seq($._indent, repeat1($._statement), $._dedent),

    // ---- expressions --------------------------------------------------

    _expression: $ => choice(
      $.identifier,
      $.integer,
      $.float,
      $.string,
      $.true,
      $.false,
      $.none,
      $.list,
      $.parenthesized_expression,
      $.call,
      $.subscript,
      $.unary_operator,
      $.not_operator,
      $.binary_operator,
      $.comparison_operator,
      $.boolean_operator,
    ),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    list: $ => seq('[', optional(seq(commaSep1($._expression), optional(','))), ']'),

    call: $ => prec(PREC.postfix, seq(
      field('function', $.identifier),
      field('arguments', $.argument_list),
    )),

    // A lone name as an argument (`relu(t)`, `gemm(a, b, acc)`) is taken as
    // the argument directly instead of being reduced to a hidden _expression
    // first: one parser reduction less per argument, the same tree. The two
    // precedences make that path win where both apply (before ',' or ')').
    argument_list: $ => prec(PREC.postfix + 1, seq(
      '(',
      optional(seq(commaSep1(choice(prec(PREC.postfix + 1, $.identifier), $._expression, $.keyword_argument)),
        optional(','))),
      ')',
    )),

    keyword_argument: $ => seq(
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    subscript: $ => prec(PREC.postfix, seq(
      field('value', $._expression),
      '[',
      commaSep1(field('index', choice($._expression, $.slice))),
      optional(','),
      ']',
    )),

    slice: $ => seq(
      optional(field('start', $._expression)),
      ':',
      optional(field('stop', $._expression)),
      optional(seq(':', optional(field('step', $._expression)))),
    ),

    unary_operator: $ => prec(PREC.unary, seq(
      field('operator', choice('-', '+', '~')),
      field('argument', $._expression),
    )),

    not_operator: $ => prec(PREC.not, seq('not', field('argument', $._expression))),

    binary_operator: $ => {
      const table = [
        [prec.left, '+', PREC.plus],
        [prec.left, '-', PREC.plus],
        [prec.left, '*', PREC.times],
        [prec.left, '/', PREC.times],
        [prec.left, '//', PREC.times],
        [prec.left, '%', PREC.times],
        [prec.right, '**', PREC.power],
        [prec.left, '|', PREC.bit_or],
        [prec.left, '^', PREC.bit_xor],
        [prec.left, '&', PREC.bit_and],
        [prec.left, '<<', PREC.shift],
        [prec.left, '>>', PREC.shift],
      ];
      return choice(...table.map(([fn, op, p]) => fn(p, seq(
        field('left', $._expression),
        field('operator', op),
        field('right', $._expression),
      ))));
    },

    comparison_operator: $ => prec.left(PREC.compare, seq(
      field('left', $._expression),
      field('operator', choice('<', '<=', '>', '>=', '==', '!=')),
      field('right', $._expression),
    )),

    boolean_operator: $ => choice(
      prec.left(PREC.and, seq(field('left', $._expression), field('operator', 'and'), field('right', $._expression))),
      prec.left(PREC.or, seq(field('left', $._expression), field('operator', 'or'), field('right', $._expression))),
    ),

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    integer: _ => token(choice(/0[xX][0-9a-fA-F_]+/, /[0-9][0-9_]*/)),

    float: _ => token(choice(
      /[0-9][0-9_]*\.[0-9_]*([eE][+-]?[0-9]+)?/,
      /\.[0-9][0-9_]*([eE][+-]?[0-9]+)?/,
      /[0-9][0-9_]*[eE][+-]?[0-9]+/,
    )),

    string: _ => token(choice(
      /"([^"\\\n]|\\.)*"/,
      /'([^'\\\n]|\\.)*'/,
    )),

    true: _ => 'True',
    false: _ => 'False',
    none: _ => 'None',

    comment: _ => token(seq('#', /.*/)),
  },
});
