// The `<key = value, ...>` syntax of #evo.knobs, #evo.plan and its parts (docs/dialect.md): a
// malformed attribute is ONE diagnostic at the offending key or value saying what was expected
// (no second "failed to parse ... parameter" error naming a C++ type).
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics

// Unknown key.
// expected-error @+1 {{#evo.knobs: unknown key 'blok_size' (expected one of block_size, elements_per_thread, vector_width, reduction, accumulators, group_outputs, group_outputs2, stream_loads, fast_math, tile_sizes, thread_tile, transpose_tile, split, cache_row, row_split, prefetch, wgmma, mma_sync, stages, persistent}}
func.func private @f() attributes {k = #evo.knobs<blok_size = 64>}

// -----

// expected-error @+1 {{#evo.buffer: unknown key 'zero' (expected one of name, role, type, zero_init, tensor_map, by_value, global)}}
func.func private @f() attributes {b = #evo.buffer<name = "a", role = input, type = memref<4xf32>, zero = true>}

// -----

// Missing required key: named, at the closing '>'.
// expected-error @+1 {{#evo.plan: missing key 'launches'}}
func.func private @f() attributes {p = #evo.plan<func = "m", source = "", buffers = [], tasks = []>}

// -----

// expected-error @+1 {{#evo.launch: missing key 'args'}}
func.func private @f() attributes {l = #evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [32, 1, 1]>}

// -----

// expected-error @+1 {{#evo.tensor_map: missing key 'box'}}
func.func private @f() attributes {t = #evo.tensor_map<source = 0, dims = [64], strides = []>}

// -----

// Duplicate key.
// expected-error @+1 {{#evo.knobs: duplicate key 'block_size'}}
func.func private @f() attributes {k = #evo.knobs<block_size = 64, block_size = 128>}

// -----

// expected-error @+1 {{#evo.task: duplicate key 'name'}}
func.func private @f() attributes {t = #evo.task<name = "t", name = "u", family = matmul, source = "", knobs = #evo.knobs<>, buffers = []>}

// -----

// Wrong value type.
// expected-error @+1 {{#evo.buffer: 'name' expects a string}}
func.func private @f() attributes {b = #evo.buffer<name = 3, role = input, type = memref<4xf32>>}

// -----

// expected-error @+1 {{#evo.buffer: 'role' expects one of input, output, scratch, tensor_map, constant}}
func.func private @f() attributes {b = #evo.buffer<name = "a", role = weights, type = memref<4xf32>>}

// -----

// expected-error @+1 {{#evo.buffer: 'type' expects a memref type, not 'tensor<4xf32>'}}
func.func private @f() attributes {b = #evo.buffer<name = "a", role = input, type = tensor<4xf32>>}

// -----

// expected-error @+1 {{#evo.task: 'family' expects one of elementwise, reduction, softmax, matmul, rows}}
func.func private @f() attributes {t = #evo.task<name = "t", family = conv, source = "", knobs = #evo.knobs<>, buffers = []>}

// -----

// expected-error @+1 {{#evo.task: 'knobs' expects #evo.knobs<...>, not #evo.tensor_map<source = 0, dims = [4], strides = [], box = [4]>}}
func.func private @f() attributes {t = #evo.task<name = "t", family = matmul, source = "", knobs = #evo.tensor_map<source = 0, dims = [4], strides = [], box = [4]>, buffers = []>}

// -----

// expected-error @+1 {{#evo.launch: 'grid' expects an integer}}
func.func private @f() attributes {l = #evo.launch<kernel = "k", task = 0, grid = [1, "x", 1], block = [32, 1, 1], args = []>}

// -----

// expected-error @+1 {{#evo.plan: 'buffers' expects a list of #evo.buffer<...>, not #evo.knobs<>}}
func.func private @f() attributes {p = #evo.plan<func = "m", source = "", buffers = [#evo.knobs<>], tasks = [], launches = []>}

// -----

// expected-error @+1 {{#evo.tensor_map: 'swizzle' expects an integer}}
func.func private @f() attributes {t = #evo.tensor_map<source = 0, dims = [64], strides = [], box = [64], swizzle = none>}

// -----

// A boolean for an integer knob (the parser used to read `true` as -1).
// expected-error @+1 {{#evo.knobs: 'block_size' expects an integer, not a boolean}}
func.func private @f() attributes {k = #evo.knobs<block_size = true>}

// -----

// expected-error @+1 {{#evo.knobs: 'tile_sizes' expects an integer, not a boolean}}
func.func private @f() attributes {k = #evo.knobs<tile_sizes = [64, false, 16]>}

// -----

// An integer for a boolean knob.
// expected-error @+1 {{#evo.knobs: 'wgmma' expects 'true' or 'false'}}
func.func private @f() attributes {k = #evo.knobs<wgmma = 1>}

// -----

// Separators.
// expected-error @+1 {{#evo.launch: expected ',' or '>' after the value of 'kernel'}}
func.func private @f() attributes {l = #evo.launch<kernel = "k" task = 0, grid = [1, 1, 1], block = [32, 1, 1], args = []>}

// -----

// expected-error @+1 {{#evo.buffer: expected '=' after 'name'}}
func.func private @f() attributes {b = #evo.buffer<name "a", role = input, type = memref<4xf32>>}

// -----

// A verifier error after a well-formed parse is still one diagnostic.
// expected-error @+1 {{evo.plan: buffer 'tm' of role tensor_map needs a tensor_map}}
func.func private @f() attributes {b = #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>>}

// -----

// A constant buffer names the memref.global holding its value; nothing else has a global.
// expected-error @+1 {{evo.plan: buffer 'w' of role constant needs the global holding its value}}
func.func private @f() attributes {b = #evo.buffer<name = "w", role = constant, type = memref<4xf32>>}

// -----

// expected-error @+1 {{evo.plan: buffer 'a' has a global but its role is not constant}}
func.func private @f() attributes {b = #evo.buffer<name = "a", role = input, type = memref<4xf32>, global = "g">}

// -----

// expected-error @+1 {{evo.plan: constant 'w' cannot be zero_init}}
func.func private @f() attributes {b = #evo.buffer<name = "w", role = constant, type = memref<4xf32>, zero_init = true, global = "g">}

// -----

// expected-error @+1 {{evo.plan: constant's global}}
func.func private @f() attributes {b = #evo.buffer<name = "w", role = constant, type = memref<4xf32>, global = "../g">}

