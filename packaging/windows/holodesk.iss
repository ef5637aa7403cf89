; Inno Setup script for holodesk on Windows (UNTESTED: see packaging/README.md).
; Built by packaging/windows/build.ps1 after PyInstaller, which passes the version:
;   iscc /DAppVersion=0.1.0 /DBundle=..\..\build\package\dist\holodesk packaging\windows\holodesk.iss
; Installs per user by default (no administrator needed; the dialog offers all users), adds
; holodesk to the Start menu, optionally to the desktop and to the programs started at login.
; Settings, automations and the action log live in %APPDATA% / %LOCALAPPDATA%\holodesk, never in
; the program folder: an upgrade keeps them and an uninstall leaves them.

#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=X.Y.Z
#endif
#ifndef Bundle
  #define Bundle "..\..\build\package\dist\holodesk"
#endif

[Setup]
AppId={{6A4C1D3E-2F0B-4B8E-9C71-5D2E8A1F0B42}
AppName=holodesk
AppVersion={#AppVersion}
AppPublisher=holodesk maintainers
DefaultDirName={autopf}\holodesk
DefaultGroupName=holodesk
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=holodesk-{#AppVersion}-windows-x64-setup
SetupIconFile=holodesk.ico
UninstallDisplayIcon={app}\holodesk-desktop.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; The PATH entry below needs Windows to tell running programs about it.
ChangesEnvironment=yes

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked
Name: "startup"; Description: "Start holodesk when I log in"; Flags: unchecked
Name: "addtopath"; Description: "Add holodesk to PATH (for the holodesk command in a terminal)"

[Files]
Source: "{#Bundle}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\holodesk"; Filename: "{app}\holodesk-desktop.exe"
Name: "{autodesktop}\holodesk"; Filename: "{app}\holodesk-desktop.exe"; Tasks: desktopicon
Name: "{userstartup}\holodesk"; Filename: "{app}\holodesk-desktop.exe"; Tasks: startup

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; \
  ValueData: "{olddata};{app}"; Tasks: addtopath; \
  Check: not IsAdminInstallMode and NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\holodesk-desktop.exe"; Description: "Start holodesk"; \
  Flags: nowait postinstall skipifsilent

[UninstallRun]
; A running holodesk would keep its files locked.
Filename: "{cmd}"; Parameters: "/C taskkill /IM holodesk-desktop.exe /F"; \
  Flags: runhidden; RunOnceId: "StopHolodesk"

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKCU, 'Environment', 'Path', Path) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;
