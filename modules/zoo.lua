-- The model zoo's index: id -> the module file that builds it, its input shape and classes.
-- nn.model(id, options) and `engine bench --model` read this table.
return {
  mlp       = {module = 'mlp', input = {1, 28, 28}, classes = 10},
  mnist_cnn = {module = 'mnist_cnn', input = {1, 28, 28}, classes = 10},
}
