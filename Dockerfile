# The app in one container: python -m app.serve on $PORT, the bundled models, nothing downloaded at start.
# (docs/hosting.md, "A container". Several containers behind a load balancer: the same image, BVE_REDIS_URL and
# STREAMLIT_SERVER_COOKIE_SECRET set alike in each, sticky sessions at the balancer.)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TOKENIZERS_PARALLELISM=false \
    PORT=8501

WORKDIR /app

# torch's CPU build (requirements.txt pins torch==2.13.0; from PyPI alone pip would pull the CUDA packages too)
COPY requirements.txt .
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt

# the app and its bundled checkpoints (.dockerignore leaves out tests, caches and training state)
COPY . .

# an unprivileged user; the Hugging Face cache (the Auto source reads real checkpoints from it when a host mounts or
# prefetches them there: python -m app.models.prefetch) is its own
RUN useradd --create-home --uid 1000 app && mkdir -p /home/app/.cache/huggingface && chown -R app /home/app /app
USER app
ENV HF_HOME=/home/app/.cache/huggingface

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:${PORT}/_stcore/health', timeout=4)"
CMD ["sh", "-c", "exec python -m app.serve --server.headless=true --server.address=0.0.0.0 --server.port=${PORT}"]
