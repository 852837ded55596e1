-- The model zoo's index: id -> the module file that builds it, its input shape (one sample)
-- and its number of classes (input_kind says what the input holds when it is not an image
-- or a feature vector). nn.model(id, options) and `engine models` read this table.
-- Input shapes are DLBS's for the models DLBS has.
return {
  mlp         = {module = 'mlp', input = {1, 28, 28}, classes = 10},
  mnist_cnn   = {module = 'mnist_cnn', input = {1, 28, 28}, classes = 10},
  lenet5      = {module = 'lenet5', input = {1, 28, 28}, classes = 10},
  deep_mnist  = {module = 'fcnet', input = {784}, classes = 10},
  sensor_net  = {module = 'fcnet', input = {784}, classes = 16},
  acoustic_model = {module = 'fcnet', input = {540}, classes = 8192},
  overfeat    = {module = 'overfeat', input = {3, 231, 231}, classes = 1000},
  gpt         = {module = 'gpt', input = {128}, classes = 1024, input_kind = 'tokens'},
  wide_deep   = {module = 'wide_deep', input = {8, 5, 4}, classes = 2,
                 input_kind = 'tabular: 8 categorical ids, 5 numeric, 4 crossed bucket ids'},
  alexnet     = {module = 'alexnet', input = {3, 227, 227}, classes = 1000},
  alexnet_owt = {module = 'alexnet', input = {3, 224, 224}, classes = 1000},
  resnet18    = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet20_cifar = {module = 'resnet_cifar', input = {3, 32, 32}, classes = 10},
  resnet56_cifar = {module = 'resnet_cifar', input = {3, 32, 32}, classes = 10},
  resnet34    = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet50    = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet101   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet152   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet200   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet269   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  googlenet   = {module = 'googlenet', input = {3, 224, 224}, classes = 1000},
  inception3  = {module = 'inception', input = {3, 299, 299}, classes = 1000},
  inception4  = {module = 'inception4', input = {3, 299, 299}, classes = 1000},
  vgg11       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
  vgg13       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
  vgg16       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
  vgg19       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
}
