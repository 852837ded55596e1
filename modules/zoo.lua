-- The model zoo's index: id -> the module file that builds it, its input shape (one sample)
-- and its number of classes. nn.model(id, options) and `engine models` read this table.
-- Input shapes are DLBS's for the models DLBS has.
return {
  mlp         = {module = 'mlp', input = {1, 28, 28}, classes = 10},
  mnist_cnn   = {module = 'mnist_cnn', input = {1, 28, 28}, classes = 10},
  alexnet     = {module = 'alexnet', input = {3, 227, 227}, classes = 1000},
  alexnet_owt = {module = 'alexnet', input = {3, 224, 224}, classes = 1000},
  resnet18    = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet34    = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet50    = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet101   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet152   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet200   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  resnet269   = {module = 'resnet', input = {3, 224, 224}, classes = 1000},
  vgg11       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
  vgg13       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
  vgg16       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
  vgg19       = {module = 'vgg', input = {3, 224, 224}, classes = 1000},
}
