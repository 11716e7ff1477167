// Four functions, five tasks, for the shard tests (shards.test, test/Slurm): two_sums has two
// tasks (a row sum and a column maximum of one input), the others one each.
func.func @scale(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %c = arith.constant dense<2.0> : tensor<4096xf32>
  %e = tensor.empty() : tensor<4096xf32>
  %r = linalg.mul ins(%x, %c : tensor<4096xf32>, tensor<4096xf32>) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

func.func @row_sum(%x: tensor<256x512xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x512xf32>) outs(%acc : tensor<256xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}

func.func @softmax(%x: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %e = tensor.empty() : tensor<128x256xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<128x256xf32>) outs(%e : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %s : tensor<128x256xf32>
}

func.func @two_sums(%x: tensor<256x512xf32>) -> (tensor<256xf32>, tensor<512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x512xf32>) outs(%acc : tensor<256xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<512xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<512xf32>) -> tensor<512xf32>
  %c = linalg.reduce ins(%x : tensor<256x512xf32>) outs(%acc2 : tensor<512xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.maximumf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r, %c : tensor<256xf32>, tensor<512xf32>
}
