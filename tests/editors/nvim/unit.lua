-- Headless Neovim test of the akg plugin without a server: loading, options,
-- reference detection, .sketch filetype and syntax, :checkhealth akg, the
-- client configuration and the 0.11 lsp/akg.lua config table.
local function log(...)
  io.stderr:write('[nvim-unit] ' .. string.format(...) .. '\n')
end

local function check(cond, fmt, ...)
  if not cond then
    error(string.format(fmt, ...), 2)
  end
end

local function run()
  vim.cmd('filetype plugin on')
  vim.cmd('syntax on')
  local akg = require('akg')
  local config = require('akg.config')

  -- Targets parse as the server parses them.
  check(vim.deep_equal(config.parse_target('cpu/cpp'), { backend = 'cpu', dsl = 'cpp' }), 'cpu/cpp')
  check(vim.deep_equal(config.parse_target('cuda/triton/a100'), { backend = 'cuda', dsl = 'triton', arch = 'a100' }),
    'cuda/triton/a100')
  for _, bad in ipairs({ 'cpu', 'a/b/c/d', 'cpu/c pp', 42 }) do
    check(config.parse_target(bad) == nil, 'malformed target %s', vim.inspect(bad))
  end
  local merged = config.merge({ targets = { 'cuda/triton' }, root_markers = { '.x' } })
  check(#merged.targets == 1 and merged.targets[1] == 'cuda/triton', 'targets replaced whole')
  check(#merged.root_markers == 1, 'root markers replaced whole, got %s', vim.inspect(merged.root_markers))
  check(merged.open_kernel == 'split', 'other defaults kept')
  local s = config.server_settings(config.merge({ targets = { 'cpu/cpp', { backend = 'cuda', dsl = 'cuda_c' } },
    python = '/usr/bin/python3', devices = 2 }))
  check(#s.targets == 2 and s.targets[2].dsl == 'cuda_c', 'server targets: %s', vim.inspect(s.targets))
  check(s.python == '/usr/bin/python3' and s.devices == 2 and s.storePath == nil, 'server settings: %s', vim.inspect(s))
  local _, missing = config.server_cmd(config.merge({ server_path = '/nonexistent/akg-lsp' }))
  check(missing and missing:match('akg%-lsp not found') and missing:match('server_path'), 'missing-server message: %s',
    tostring(missing))

  akg.setup({ server_path = '/nonexistent/akg-lsp', progress = false })
  for _, c in ipairs({ 'AkgGenerate', 'AkgCancel', 'AkgReport', 'AkgDesign', 'AkgVerify' }) do
    check(vim.fn.exists(':' .. c) == 2, 'command :%s defined', c)
  end

  -- Reference detection.
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp, 'p')
  local ref = tmp .. '/op.py'
  vim.fn.writefile({ 'import torch', 'class Model(torch.nn.Module):', '    pass', 'def get_inputs():', '    return []' },
    ref)
  vim.cmd('edit ' .. ref)
  check(vim.bo.filetype == 'python', 'python filetype')
  check(akg.is_reference(0), 'KernelBench form is a reference')
  vim.api.nvim_buf_set_lines(0, 3, 4, false, { 'def make_inputs():' })
  check(not akg.is_reference(0), 'no get_inputs: not a reference')
  check(akg.is_model(0), 'a class deriving from torch.nn.Module: a model')
  local model = tmp .. '/block.py'
  vim.fn.writefile({ 'import torch.nn as nn', 'class Block(nn.Module):', '    def forward(self, x):',
    '        return x.relu()' }, model)
  vim.cmd('hide edit ' .. model)
  check(akg.is_model(0) and not akg.is_reference(0), 'an nn.Module subclass is a model, not a reference')
  vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'class Block(object):' })
  check(not akg.is_model(0), 'a plain class is not a model')
  vim.cmd('hide edit ' .. ref)
  check(akg.root_dir(ref) == tmp, 'root_dir falls back to the file folder, got %s', akg.root_dir(ref))
  vim.fn.mkdir(tmp .. '/.akg', 'p')
  vim.fn.mkdir(tmp .. '/sub', 'p')
  check(akg.root_dir(tmp .. '/sub/x.py') == tmp, 'root_dir finds the .akg marker above')

  -- .sketch: filetype, syntax groups, ftplugin.
  local sk = tmp .. '/relu.sketch'
  vim.fn.writefile({ 'sketch relu {', '  symbols: N;', '  tensors: x[N]: f32; y[N]: f32;',
    '  @llm_hint("parallel", "coreidx")', '  for i in range(0, N, 1024):', '    t = alloc([1024])',
    '    load(x[i:i+1024] -> t)  # tile', '    store(relu(t) -> y[i:i+1024])',
    '  bind: x = input("x"), y = output(0)', '  bind = gather(t, t, 0)', '}' }, sk)
  vim.cmd('edit ' .. sk)
  check(vim.bo.filetype == 'sketch', 'sketch filetype, got %q', vim.bo.filetype)
  check(vim.b.current_syntax == 'sketch', 'sketch syntax loaded')
  check(vim.bo.commentstring == '# %s', 'ftplugin commentstring, got %q', vim.bo.commentstring)
  local function group_at(lnum, pat)
    local line = vim.fn.getline(lnum)
    local col = line:find(pat, 1, true)
    check(col, 'pattern %s on line %d', pat, lnum)
    return vim.fn.synIDattr(vim.fn.synID(lnum, col, 1), 'name')
  end
  local expect = {
    { 1, 'sketch', 'sketchKeyword' }, { 2, 'symbols', 'sketchKeyword' }, { 3, 'f32', 'sketchDtype' },
    { 4, '@llm_hint', 'sketchDecorator' }, { 4, '"parallel"', 'sketchString' }, { 5, 'for', 'sketchRepeat' },
    { 5, 'range', 'sketchBuiltin' }, { 5, '1024', 'sketchNumber' }, { 6, 'alloc', 'sketchBuiltin' },
    { 7, 'load', 'sketchBuiltin' }, { 7, '->', 'sketchOperator' }, { 7, '# tile', 'sketchComment' },
    { 8, 'relu', 'sketchOperation' }, { 8, 'store', 'sketchBuiltin' },
    { 9, 'bind', 'sketchKeyword' }, { 9, 'input', 'sketchBuiltin' }, { 9, 'output', 'sketchBuiltin' },
    { 10, 'gather', 'sketchOperation' },
  }
  for _, e in ipairs(expect) do
    local g = group_at(e[1], e[2])
    check(g == e[3], 'line %d %q is %s, got %q', e[1], e[2], e[3], g)
  end
  -- A .sketch buffer tries to attach; the server is missing, so no client.
  check(akg.client(0) == nil, 'no client without a server')

  -- The client configuration handed to vim.lsp.start / start_client.
  -- (options set directly: setup() would attach the open buffers to this fake server)
  akg.opts = config.merge({ server_path = vim.v.progpath, targets = { 'cpu/cpp' }, python = '/usr/bin/python3' })
  local cfg = akg.client_config(tmp)
  check(cfg.name == 'akg' and cfg.cmd[1] == vim.fn.exepath(vim.v.progpath), 'cmd: %s', vim.inspect(cfg.cmd))
  check(cfg.cmd_env.AKG_PYTHON == '/usr/bin/python3', 'AKG_PYTHON in cmd_env')
  check(cfg.workspace_folders[1].uri == vim.uri_from_fname(tmp), 'workspace folder')
  check(cfg.settings.akg.targets[1].backend == 'cpu', 'settings section')
  check(cfg.capabilities.window.showDocument.support == true, 'showDocument supported')
  check(type(cfg.handlers['akg/jobFinished']) == 'function', 'jobFinished handler')

  -- The 0.11 config table.
  local spec = dofile(vim.api.nvim_get_runtime_file('lsp/akg.lua', false)[1])
  check(spec.cmd[1] == 'akg-lsp' and vim.tbl_contains(spec.filetypes, 'sketch'), 'lsp/akg.lua config: %s',
    vim.inspect(spec.cmd))
  check(type(spec.root_dir) == 'function', 'lsp/akg.lua root_dir decides per buffer')

  -- :checkhealth akg runs and reports (on the real server when AKG_LSP names it).
  local server = os.getenv('AKG_LSP')
  if server and server ~= '' then
    akg.opts = config.merge({ server_path = server, python = '/usr/bin/python3' })
  else
    akg.opts = config.merge({ server_path = '/nonexistent/akg-lsp' })
  end
  vim.cmd('checkhealth akg')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(report:find('akg: language server', 1, true), 'health report has its sections: %s', report)
  check(not report:find('No healthcheck found', 1, true), 'the health check was found')
  check(not report:find('Failed to run healthcheck', 1, true), 'the health check ran: %s', report)
  if server and server ~= '' then
    check(report:find('OK: ' .. vim.fn.exepath(server) .. ': akg-lsp ', 1, true), 'the server answered --version')
  else
    check(report:find('ERROR: akg-lsp not found', 1, true), 'a missing server is an error')
  end
  log('checkhealth:\n%s', report)

  -- Help tags.
  local doc = vim.api.nvim_get_runtime_file('doc/akg.txt', false)[1]
  check(doc, 'doc/akg.txt on the runtimepath')
  local text = table.concat(vim.fn.readfile(doc), '\n')
  for _, tag in ipairs({ '*akg.txt*', '*:AkgGenerate*', '*:AkgCancel*', '*:AkgReport*', '*akg-setup*' }) do
    check(text:find(tag, 1, true), 'help tag %s', tag)
  end
  vim.fn.delete(tmp, 'rf')
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  log('PASS')
  vim.cmd('qall!')
else
  log('FAIL: %s', tostring(err))
  vim.cmd('cquit 1')
end
