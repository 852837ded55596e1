return { name = 'broken' hparams = {} }
