# syntax=docker/dockerfile:1
# site-reconciler in a container: the `reconciler` command is the entry point and it runs as an
# unprivileged user (numeric, so Kubernetes' runAsNonRoot can check it).
#
#   docker build -t site-reconciler .
#   docker run --rm -v "$PWD:/work" -e RECONCILER_API_KEY -e RECONCILER_API_SECRET -e RECONCILER_STATE \
#       -e PGPASSWORD site-reconciler plan site/
#
# Keep the records in PostgreSQL (RECONCILER_STATE) in CI: a container keeps nothing. With
# records in a directory of the mounted checkout, run as its owner: --user "$(id -u):$(id -g)".

# Build the wheels of the tool and its dependencies; nothing of this stage is shipped but them.
FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY reconciler ./reconciler
# reconciler/schemas is a link to ../schemas: COPY keeps links, so the target comes too
COPY schemas ./schemas
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# The image: Python, the installed wheels (bound from the build stage, never copied into a
# layer), one user without a password or a shell login. The tool's version is pinned: the one
# this checkout builds (pyproject.toml); a build of another version says which with
# --build-arg RECONCILER_VERSION=...
FROM python:3.12-slim
ARG RECONCILER_VERSION=0.1.0
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels "site-reconciler==${RECONCILER_VERSION}" \
    && useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin reconciler
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["reconciler"]
CMD ["--help"]
