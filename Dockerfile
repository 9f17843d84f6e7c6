# CareNav app image (issue 14). Used by compose.yml for the one-shot `build` service and the app.
#   docker build -t carenav .
# Slim Python base; dependencies in their own layer (rebuilt only when requirements.txt changes);
# runs as an unprivileged user; health check on Streamlit's /_stcore/health.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Runtime dependencies only: the "# Runtime" block of requirements.txt (the test tools are left out).
COPY requirements.txt ./
RUN sed -n '/^# Runtime/,/^# Tests/p' requirements.txt | grep -v '^#' > /tmp/runtime.txt \
    && pip install --no-compile -r /tmp/runtime.txt \
    && rm /tmp/runtime.txt

COPY pyproject.toml app.py ./
COPY carenav_core ./carenav_core
COPY views ./views
COPY data ./data
COPY .streamlit/config.toml ./.streamlit/config.toml
# Editable, like requirements.txt: the `carenav` command then reads /app/data (sources, rules, corpus).
RUN pip install --no-deps --no-compile -e . \
    && useradd --create-home --uid 10001 --user-group carenav \
    && mkdir -p /var/lib/carenav \
    && chown -R carenav:carenav /var/lib/carenav /app/data

USER 10001:10001
# Built data (fee-schedule DuckDB, download cache) lives in a volume shared with the `build` service.
ENV CARENAV_DUCKDB_PATH=/var/lib/carenav/carenav.duckdb \
    CARENAV_CACHE_DIR=/var/lib/carenav/cache

EXPOSE 8501
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"]

# The preflight refuses to start on a non-loopback address without sign-in configured
# (unless CARENAV_ALLOW_ANONYMOUS=1); see carenav_core/ui/auth.py.
CMD ["sh", "-c", "python -m carenav_core.ui.auth --address 0.0.0.0 && exec streamlit run app.py --server.address 0.0.0.0 --server.port 8501"]
