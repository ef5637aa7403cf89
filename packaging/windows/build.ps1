# Builds dist\holodesk-<version>-windows-x64-setup.exe (UNTESTED: see packaging/README.md).
# Run from the repository root in PowerShell, with Python 3.11+ (python.org build) and Inno
# Setup 6 (iscc.exe on PATH, or in its default folder):
#   powershell -ExecutionPolicy Bypass -File packaging\windows\build.ps1
$ErrorActionPreference = "Stop"
$root = Resolve-Path "$PSScriptRoot\..\.."
Set-Location $root
$venv = "build\package\venv-windows"
if (-not (Test-Path "$venv\Scripts\python.exe")) {
    Write-Host "==> build environment $venv"
    py -3 -m venv $venv
}
$py = "$venv\Scripts\python.exe"
Write-Host "==> holodesk's runtime dependencies and PyInstaller"
& $py -m pip install --quiet --upgrade pip
& $py -m pip install --quiet --upgrade . -r packaging\requirements-build.txt
& $py -c "import keyrings.alt" 2>$null
if ($LASTEXITCODE -eq 0) { throw "keyrings.alt is in $venv; it must never ship. Delete the folder." }
$version = (& $py -c "import importlib.metadata as m; print(m.version('holodesk'))").Trim()
Write-Host "==> freezing holodesk $version"
& $py -m PyInstaller --noconfirm --log-level WARN --distpath build\package\dist `
    --workpath build\package\work-windows packaging\holodesk.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }
& build\package\dist\holodesk\holodesk.exe --help | Out-Null
if ($LASTEXITCODE -ne 0) { throw "the frozen holodesk.exe does not run" }
$iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $iscc) { $iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
Write-Host "==> Inno Setup"
& $iscc "/DAppVersion=$version" "/DBundle=$root\build\package\dist\holodesk" `
    packaging\windows\holodesk.iss
if ($LASTEXITCODE -ne 0) { throw "iscc failed" }
Write-Host "==> done: dist\holodesk-$version-windows-x64-setup.exe"
