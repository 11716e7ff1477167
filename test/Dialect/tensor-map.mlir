// #evo.tensor_map and buffers of role tensor_map (docs/dialect.md): a valid plan round-trips;
// every rule of evo/Runtime/TensorMap.h (shape, element type, swizzle, the bytes addressed
// within the source: a hostile plan cannot make the host encode a map reaching past its source)
// is a diagnostic when the module is parsed.
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// The printed form parses back:
// RUN: evo-opt %s -split-input-file -verify-diagnostics | evo-opt -split-input-file | FileCheck %s

// CHECK-LABEL: gpu.module @valid
// CHECK-SAME: #evo.buffer<name = "a", role = input, type = memref<256x512xf16>>
// CHECK-SAME: #evo.buffer<name = "tmap0", role = tensor_map, type = memref<128xi8>, tensor_map = <source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>
// CHECK-SAME: #evo.buffer<name = "tmap1", role = tensor_map, type = memref<128xi8>, tensor_map = <source = 1, dims = [64], strides = [], box = [4]>>
module attributes {gpu.container_module} {
  gpu.module @valid attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "r", role = output, type = memref<64xf32>>, #evo.buffer<name = "tmap0", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>, #evo.buffer<name = "tmap1", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 1, dims = [64], strides = [], box = [4], swizzle = 0>>], tasks = [#evo.task<name = "t", family = matmul, source = "", knobs = #evo.knobs<>, buffers = [0, 1, 2, 3]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [128, 1, 1], args = [0, 1, 2, 3]>]>} {
    gpu.func @k(%a: memref<256x512xf16>, %r: memref<64xf32>, %m0: memref<128xi8>, %m1: memref<128xi8>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: buffer 'tm' of role tensor_map needs a tensor_map}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: buffer 'tm' has a tensor_map but its role is not tensor_map}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = scratch, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' must have type 'memref<128xi8>', not 'memref<64xi8>'}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<64xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' cannot be zero_init}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, zero_init = true, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' names source buffer 5, which is out of range}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 5, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' has source 'tm0', which is a tensor map itself}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm0", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 1, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: rank 6 is not in 1..5}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [2, 2, 2, 2, 2, 2], strides = [16, 16, 16, 16, 16], box = [8, 1, 1, 1, 1, 1], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: rank 0 is not in 1..5}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [], strides = [], box = [], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: needs rank - 1 = 1 strides, got 2}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024, 16], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: needs 2 box sizes (one per dimension), got 1}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: strides[0] = 1000 bytes is not a positive multiple of 16 below 2^40}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1000], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: strides[0] = 1099511627776 bytes is not a positive multiple of 16 below 2^40}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1099511627776], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: dims[1] = 0 is not in [1, 2^32]}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 0], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: dims[0] = 4294967297 is not in [1, 2^32]}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [4294967297, 1], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: box[1] = 0 is not in [1, 256]}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 0], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: box[1] = 257 is not in [1, 256]}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 257], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map: swizzle 16 is not 0, 32, 64 or 128 bytes}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 16>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map source -1 is not a buffer index}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = -1, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': the box's inner extent box[0] * 2 = 8 bytes is not a multiple of 16}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [4, 128], swizzle = 0>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': the box's inner extent of 256 bytes exceeds the swizzle of 128 bytes}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [128, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': the box's inner extent of 128 bytes exceeds the swizzle of 64 bytes}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 64>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': its source's element type f8E4M3FN is not one TMA supports (f16, bf16, f32, f64, i8, i16, i32, i64)}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf8E4M3FN>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 256], strides = [512], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': addresses bytes up to 263168 of its source, which has 262144}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 257], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': addresses bytes up to 262160 of its source, which has 262144}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [520, 256], strides = [1024], box = [64, 128], swizzle = 128>>], tasks = [], launches = []>} {
  }
}

// -----

// expected-error @+2 {{evo.plan: tensor map 'tm' over 'a': addresses bytes up to beyond 2^64 of its source, which has 262144}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "a", role = input, type = memref<256x512xf16>>, #evo.buffer<name = "tm", role = tensor_map, type = memref<128xi8>, tensor_map = #evo.tensor_map<source = 0, dims = [512, 4294967296, 4294967296], strides = [1024, 1099511627760], box = [64, 1, 1], swizzle = 128>>], tasks = [], launches = []>} {
  }
}
