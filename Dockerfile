FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY ctxaudit ./ctxaudit
RUN pip install --no-cache-dir .
COPY . .
RUN useradd --create-home ctxaudit && chown -R ctxaudit /app
USER ctxaudit
EXPOSE 8000
