# The engine in a Debian 12 image, for schedulers that run containers (Kubernetes' PyTorchJob,
# OpenPAI, Slurm with a container runtime): README's set-up command, then `engine` on the PATH.
# See docs/distributed.md.   docker build -t engine .
FROM debian:12
ENV DEBIAN_FRONTEND=noninteractive
COPY . /opt/engine
WORKDIR /opt/engine
RUN scripts/install-deps.sh \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DENGINE_BUILD_TESTS=OFF \
 && cmake --build build -j"$(nproc)" \
 && ln -s /opt/engine/build/bin/engine /usr/local/bin/engine \
 && rm -rf /var/lib/apt/lists/*
ENV ENGINE_HOME=/opt/engine
WORKDIR /work
CMD ["engine", "--help"]
