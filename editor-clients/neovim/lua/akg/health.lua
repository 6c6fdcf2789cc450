-- :checkhealth akg. Uses vim.health (0.10: start/ok/warn/error; 0.8-0.9:
-- report_*) and falls back to the health#report_* functions of Neovim 0.7.
local M = {}

local function reporter()
  local h = vim.health
  if h and h.start then
    return h.start, h.ok, h.warn, h.error, h.info
  end
  if h and h.report_start then
    return h.report_start, h.report_ok, h.report_warn, h.report_error, h.report_info
  end
  local fn = vim.fn
  return fn['health#report_start'], fn['health#report_ok'], fn['health#report_warn'], fn['health#report_error'],
    fn['health#report_info']
end

function M.check()
  local start, ok, warn, report_error, info = reporter()
  local akg = require('akg')
  local config = require('akg.config')
  local opts = akg.opts

  start('akg: Neovim')
  if vim.fn.has('nvim-0.7') == 1 then
    ok('Neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. ' (0.7 or later)')
  else
    report_error('Neovim 0.7 or later is needed')
  end

  start('akg: language server')
  local cmd, err = config.server_cmd(opts)
  if not cmd then
    report_error(err)
  else
    local out = vim.fn.system({ cmd[1], '--version' })
    if vim.v.shell_error == 0 and out:match('^akg%-lsp') then
      ok(cmd[1] .. ': ' .. vim.trim(out))
    else
      report_error(cmd[1] .. ' --version failed: ' .. vim.trim(out))
    end
  end

  start('akg: harness')
  local python = opts.python and vim.fn.expand(opts.python) or vim.env.AKG_PYTHON
  if not python or python == '' then
    info('python not set: the server uses AKG_PYTHON or its built-in default')
  elseif vim.fn.executable(python) ~= 1 then
    report_error('python = ' .. python .. ' is not executable')
  else
    local out = vim.fn.system({ python, '-c', 'import torch; print(torch.__version__)' })
    if vim.v.shell_error == 0 then
      ok(python .. ': PyTorch ' .. vim.trim(out))
    else
      warn(python .. ' cannot import torch: the harness will fail', { 'Install PyTorch for this interpreter.' })
    end
  end

  start('akg: settings')
  for _, t in ipairs(config.targets(opts)) do
    info('target ' .. config.target_label(t))
  end
  info('provider ' .. tostring(opts.provider))
  local clients = {}
  for _, c in ipairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    if c.name == akg.name then
      table.insert(clients, string.format('%d (%s)', c.id, c.config.root_dir or '?'))
    end
  end
  if #clients > 0 then
    ok('running clients: ' .. table.concat(clients, ', '))
  else
    info('no akg client running (open a reference or a .sketch file)')
  end

  start('akg: sketch highlighting')
  if #vim.api.nvim_get_runtime_file('syntax/sketch.vim', false) > 0 then
    ok('syntax/sketch.vim found')
  else
    warn('syntax/sketch.vim is not on the runtimepath')
  end
  local has_ts = #vim.api.nvim_get_runtime_file('parser/sketch.so', false) > 0
  if has_ts then
    ok('tree-sitter parser for sketch installed (queries/sketch/highlights.scm is used)')
  else
    info('no tree-sitter parser for sketch: the Vim syntax file highlights (see :help akg-treesitter)')
  end
end

return M
